"""One window per data folder: a second launch hands over to the first and exits.

Two windows over one ``EDGEDESK_HOME`` would write the same database and try to start a
second server on the same port; a window hidden to a tray that the desktop does not
show could not be found again. The first launch holds a lock file in the config folder
and listens on a local socket named after that folder; a later launch that cannot take
the lock connects to it, asks the first to show its window (and to open a file), and
exits.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import time
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from desktop.base.config import user_path

LOCK_NAME = "window.lock"
CONNECT_MS = 1000
# How long a later launch keeps trying while the first one is still starting up (it
# holds the lock a moment before it listens).
HAND_OVER_S = 15.0


def socket_name(config_dir: Path) -> str:
    """The local socket's name for this config folder and user (short: Unix paths are)."""
    key = f"{getpass.getuser()}\0{user_path(config_dir).resolve()}"
    return "edgedesk-" + hashlib.sha256(key.encode()).hexdigest()[:20]


class SingleInstance(QObject):
    """The lock and the socket of the one window over a config folder (window thread).

    ``claim`` takes both (True) or says another window has them (False): then call
    ``hand_over``. ``requested`` fires when a later launch asks this window to show
    itself, with the file it was given ('' for none).
    """

    requested = Signal(str)

    def __init__(self, config_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._config_dir = config_dir
        self.name = socket_name(config_dir)
        self._lock = QLockFile(str(config_dir / LOCK_NAME))
        # Stale only when its process is gone (a crash): never because it is old.
        self._lock.setStaleLockTime(0)
        self._server: QLocalServer | None = None

    def claim(self) -> bool:
        """Take the lock and listen; False if another live window holds the lock."""
        try:
            self._config_dir.mkdir(parents=True, exist_ok=True)
        except OSError:
            return True  # nothing to guard: starting up says why the folder is unusable
        if not self._lock.tryLock(0):
            return False
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        QLocalServer.removeServer(self.name)  # a socket file left by a crashed window
        if not server.listen(self.name):
            self._lock.unlock()
            return False
        server.newConnection.connect(self._accept)
        self._server = server
        return True

    def release(self) -> None:
        """Stop listening and drop the lock (the window is closing)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self._lock.unlock()

    def _accept(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(self._read)  # methods, not lambdas: see workers.Worker

    def _read(self) -> None:
        socket = self.sender()
        if not isinstance(socket, QLocalSocket) or not socket.canReadLine():
            return
        try:
            message = json.loads(bytes(socket.readLine().data()).decode())
            path = str(message.get("open") or "")
        except (ValueError, AttributeError):
            return  # not one of ours: nothing to do
        socket.write(b"ok\n")
        socket.flush()
        socket.disconnectFromServer()  # it is deleted with the server, not one by one
        self.requested.emit(path)

    def hand_over(self, path: str | None = None, timeout_s: float = HAND_OVER_S) -> bool:
        """Ask the window holding the lock to show itself (and open ``path``); blocks.

        True once it said it will; False if none answered within ``timeout_s``.
        """
        line = json.dumps({"open": path}).encode() + b"\n"
        deadline = time.monotonic() + timeout_s
        while True:
            socket = QLocalSocket()
            socket.connectToServer(self.name)
            if socket.waitForConnected(CONNECT_MS):
                socket.write(line)
                # False when the line already went out at write(): only the answer counts.
                socket.waitForBytesWritten(CONNECT_MS)
                if (
                    socket.waitForReadyRead(CONNECT_MS * 5)
                    and bytes(socket.readLine().data()).strip() == b"ok"
                ):
                    socket.disconnectFromServer()
                    return True
            socket.abort()
            if time.monotonic() >= deadline:
                return False
            if self._lock.tryLock(0):  # the other window closed meanwhile
                self._lock.unlock()
                return False
            time.sleep(0.2)
