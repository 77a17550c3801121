"""Cancelling a download at once, even while it waits on a server that went silent."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

import httpx


class CancelEvent(threading.Event):
    """A cancel event that also wakes a download blocked on a silent connection.

    A plain ``threading.Event`` is only seen between received chunks, so a stalled server
    kept a pause or a cancel waiting for the stall timeout (30 s). Setting this one also
    shuts down the socket being read, which ends the blocked read at once.
    """

    def __init__(self) -> None:
        super().__init__()
        self._wakers: list[Callable[[], None]] = []
        self._guard = threading.Lock()

    def set(self) -> None:
        """Set the event and wake whatever registered with ``on_set``."""
        super().set()
        with self._guard:
            wakers, self._wakers = self._wakers, []
        for wake in wakers:
            wake()

    def on_set(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake`` when the event is set (now, if it already is); returns an undo."""
        with self._guard:
            if not self.is_set():
                self._wakers.append(wake)
                return lambda: self._forget(wake)
        wake()
        return lambda: None

    def _forget(self, wake: Callable[[], None]) -> None:
        with self._guard, contextlib.suppress(ValueError):
            self._wakers.remove(wake)


def wake_on_cancel(cancel: threading.Event, response: httpx.Response) -> Callable[[], None]:
    """Arrange for ``cancel`` to end a read blocked on ``response``'s socket."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if not isinstance(cancel, CancelEvent) or sock is None:
        return lambda: None

    def shut() -> None:
        # The plain socket's shutdown, also for TLS: SSLSocket.shutdown first drops its
        # SSL object, and a read in between fails with errors httpx does not translate.
        with contextlib.suppress(OSError):  # already closed: nothing is blocked on it
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    return cancel.on_set(shut)
