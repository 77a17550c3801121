"""Run the server: on a background thread for the GUI, or headless for ``edgedesk serve``.

The runner only serves: unloading idle models and maintenance are the app's one
``desktop.upkeep.Housekeeping``, which the window or ``edgedesk serve`` starts.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import uvicorn

from desktop.base.audit import Auditor
from desktop.base.errors import ConfigError
from desktop.server._asgi import create_app
from desktop.server._metrics import AccessRecord
from desktop.server._security import KeyStore
from desktop.server._services import Services

log = logging.getLogger("edgedesk.server")
KEYS_FILE = "api_keys.json"
ACCESS_LOG_FILE = "access.log"
LISTEN_BACKLOG = 2048  # uvicorn's own default


def key_store(
    data_dir: Path, *, max_lifetime_days: int | None = None, audit: Auditor | None = None
) -> KeyStore:
    """The API key store of an installation (keys capped at ``max_lifetime_days``)."""
    return KeyStore(data_dir / KEYS_FILE, max_lifetime_days=max_lifetime_days, audit=audit)


class ServerRunner:
    """One server: ``start()``/``stop()`` on a thread, or ``serve_forever()`` in the foreground.

    ``start``, ``stop`` and ``serve_forever`` are called by one owning thread (the
    window's worker, ``edgedesk serve``'s main thread); ``running``, ``url`` and
    ``subscribe`` from any thread. Subscribers are called on the server's thread.
    """

    def __init__(self, services: Services) -> None:
        self.services = services
        self.scheduler = services.scheduler
        self.settings = services.settings
        self.image_limits = services.image_limits  # caps on one picture (policy ImageMaxMB, …)
        self.access_log = services.access_log
        self.metrics = services.metrics
        self.app = create_app(services)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = services.settings.port

    # ------------------------------------------------------------------ status
    @property
    def running(self) -> bool:
        """Whether the server is accepting connections."""
        return (
            self._server is not None and bool(self._server.started) and not self._server.should_exit
        )

    @property
    def port(self) -> int:
        """The bound port (the real one when 0 was asked for)."""
        return self._port

    @property
    def url(self) -> str:
        """The base URL clients use, ending in ``/v1``."""
        host = self.settings.host
        if ":" in host:
            host = f"[{host}]"
        if host in ("0.0.0.0", "[::]"):  # noqa: S104 - a wildcard bind is reached via loopback
            host = "127.0.0.1"
        return f"http://{host}:{self._port}/v1"

    def subscribe(self, callback: Callable[[AccessRecord], None]) -> Callable[[], None]:
        """Get each access record (no content) as requests finish; returns an unsubscribe."""
        return self.access_log.subscribe(callback)

    # ------------------------------------------------------------------ lifecycle
    def _config(self) -> uvicorn.Config:
        return uvicorn.Config(
            self.app,
            host=self.settings.host,
            port=self.settings.port,
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
            server_header=False,
        )

    def _bind(self) -> socket.socket:
        if not self.settings.enabled:  # checked here so every way of starting obeys it
            raise ConfigError(
                "the local API server is turned off by your organization's "
                "policy (ServerAllowed); ask IT if you need it"
            )
        family = socket.AF_INET6 if ":" in self.settings.host else socket.AF_INET
        # proto=IPPROTO_TCP matters: asyncio turns Nagle off (TCP_NODELAY) only on accepted
        # sockets whose proto says TCP; with proto 0 every response on a kept-alive
        # connection waited ~40 ms for the client's delayed ACK before its first token.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        if sys.platform == "win32":
            # Windows' SO_REUSEADDR would let another program take a port we listen on;
            # it needs nothing to rebind after a crash, and this keeps the port ours.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        else:
            # A crash (kill -9) leaves the last connections lingering on the port for
            # about a minute (TIME_WAIT); without this the restarted server was refused
            # "Address already in use". A port another server listens on is still refused.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.settings.host, self.settings.port))
            # Listening now, not when uvicorn's loop starts: a client told the server is
            # serving (the start-up line, the window) that connects at once waits in
            # the backlog instead of being refused.
            sock.listen(LISTEN_BACKLOG)
        except OSError as exc:
            sock.close()
            raise ConfigError(
                f"cannot listen on {self.settings.host}:{self.settings.port} "
                f"({exc.strerror}); pick another port with --port"
            ) from None
        self._port = int(sock.getsockname()[1])
        return sock

    def start(self, timeout_s: float = 10.0) -> None:
        """Serve on a background thread; returns once connections are accepted."""
        if self._thread is not None:
            raise ConfigError("the server is already running")
        sock = self._bind()
        server = uvicorn.Server(self._config())
        self._server = server
        # uvicorn installs signal handlers only on the main thread: the GUI keeps its own.
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="edgedesk-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not server.started:
            self.stop()
            raise ConfigError(f"the server did not start on {self.url}; see the log")
        log.info("serving the OpenAI-compatible API on %s", self.url)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop accepting, finish (or cancel) what runs, and join the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout_s)
        self._thread = self._server = None

    def serve_forever(self, on_ready: Callable[[str], None] | None = None) -> None:
        """Serve in the foreground until SIGINT/SIGTERM, then shut down gracefully."""
        sock = self._bind()
        server = uvicorn.Server(self._config())
        self._server = server
        if on_ready is not None:
            on_ready(self.url)
        # uvicorn shuts down gracefully on SIGTERM, then raises the signal again; its
        # default action would end the process before the caller's cleanup (models
        # unloading, their conversations' caches saved to disk).
        previous = signal.signal(signal.SIGTERM, _terminated)
        try:
            server.run(sockets=[sock])
        except _Terminated:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            self._server = None
            with contextlib.suppress(OSError):
                sock.close()


class _Terminated(Exception):
    """SIGTERM arrived after uvicorn's own graceful shutdown."""


def _terminated(signum: int, frame: object) -> None:
    raise _Terminated
