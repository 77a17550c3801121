"""The clickable citations under a grounded answer (the grounding itself is the core's,
``desktop.chat.grounding``; its names are re-exported here for the window's modules).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from desktop.chat.grounding import SOURCES_K, Search, cite, was_cited
from desktop.ui.rich_text import literal_tooltip

if TYPE_CHECKING:
    from desktop.store.sources import Source

__all__ = ["SOURCES_K", "CitationRow", "Search", "cite", "is_local_file", "open_source",
           "was_cited"]


def is_local_file(path: str) -> bool:
    """Whether ``path`` names an existing regular file on this computer (no network share)."""
    # Checked as text first: merely looking at \\host\share on Windows connects to the host
    # and sends the user's credentials, and cited paths can come from an imported chat.
    if path[:2] in {"\\\\", "//", "\\/", "/\\"}:
        return False
    return os.path.isabs(path) and os.path.isfile(path)  # False, not an error, for odd names


def open_source(path: str) -> bool:
    """Open a cited file in the desktop's viewer; opens nothing (False) unless is_local_file."""
    if not is_local_file(path):
        return False
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


class CitationRow(QWidget):
    """``[1] notes.pdf`` buttons under an answer; a click opens the file, the tooltip says
    the page and lines."""

    opened = Signal(str)  # the path opened
    unavailable = Signal(str)  # a sentence for the user: the cited file cannot be opened

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("Footer")
        self._row.addWidget(self.label)
        self._row.addStretch(1)
        self.buttons: list[QToolButton] = []

    def show_citations(self, items: Sequence[Source], *, cited: bool) -> None:
        """One button per citation (hidden when there are none)."""
        for button in self.buttons:
            self._row.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        self.setVisible(bool(items))
        self.label.setText(self.tr("Sources:") if cited
                           else self.tr("Sources given (none cited):"))
        for item in items:
            button = QToolButton()
            button.setObjectName("Small")
            button.setText(f"[{item.number}] {Path(item.path).name}")
            snippet = " ".join(item.text.split())
            # The path and snippet come from documents (or an imported chat): shown as text.
            button.setToolTip(literal_tooltip(f"{item.location}\n\n{snippet[:300]}"))
            button.setAccessibleName(self.tr("Open source ") + str(item.number))
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(self._open_handler(item.path))
            self._row.insertWidget(self._row.count() - 1, button)
            self.buttons.append(button)

    def _open_handler(self, path: str) -> Callable[[], Any]:
        def handler() -> None:
            # Runs on the window's thread: a button's clicked is a direct connection.
            if open_source(path):
                self.opened.emit(path)
            elif not is_local_file(path):
                self.unavailable.emit(self.tr(
                    "The cited file is not on this computer any more: %1").replace("%1", path))
            else:  # the desktop has no program for it (it only logged a line)
                self.unavailable.emit(self.tr(
                    "No program on this computer opens this file; open it yourself: %1")
                    .replace("%1", path))
        return handler
