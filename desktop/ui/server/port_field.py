"""The Server screen's port: a field the user edits, and a free port when one is taken."""

from __future__ import annotations

import contextlib
import socket

from PySide6.QtWidgets import QSpinBox, QWidget

FIRST_PORT = 1024  # below it a user's program may not listen (and nothing should)
LAST_PORT = 65535


def port_free(host: str, port: int) -> bool:
    """Whether a server could listen on ``host``:``port`` now (nothing else listens)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As the server binds (runner._bind): a port lingering after a crash counts as free.
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(1)
        except OSError:
            return False
    return True


def free_port_after(host: str, port: int, tries: int = 50) -> int | None:
    """The first port after ``port`` a server could listen on; None if none of ``tries``."""
    for candidate in range(port + 1, min(port + 1 + tries, LAST_PORT + 1)):
        if port_free(host, candidate):
            return candidate
    return None


class PortField(QSpinBox):
    """The port the API server listens on (1024-65535), as the user types it.

    GUI thread only. The Server screen saves its value through the context's
    ``apply_settings`` when editing finishes and before the server starts.
    """

    def __init__(self, port: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(FIRST_PORT, LAST_PORT)
        self.setValue(port)
        self.setPrefix(self.tr("Port "))
        self.setAccessibleName(self.tr("Server port"))
        self.setToolTip(
            self.tr("The port the API server listens on; applies when the server starts.")
        )
        self.setKeyboardTracking(False)  # one change per edit, not one per digit
