"""The clickable citations under a grounded answer (the grounding itself is the core's,
``desktop.chat._grounding``; its names are re-exported here for the window's modules).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from desktop.chat import SOURCES_K, Search, cite, was_cited
from desktop.store import Source
from desktop.ui.chat.source_viewer import SourceViewer, is_local_file, open_source
from desktop.ui.common.core_text import source_place
from desktop.ui.common.rich_text import literal_tooltip

__all__ = [
    "SOURCES_K",
    "CitationRow",
    "Search",
    "cite",
    "is_local_file",
    "open_source",
    "was_cited",
]


class CitationRow(QWidget):
    """``[1] notes.pdf`` buttons under an answer; a click shows the passage in its file
    (``SourceViewer``, whose Open file hands it to the desktop), the tooltip says the page
    and lines."""

    opened = Signal(str)  # the path opened
    unavailable = Signal(str)  # a sentence for the user: the cited file cannot be opened
    viewed = Signal(object)  # the SourceViewer just shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("Footer")
        self._row.addWidget(self.label)
        self._row.addStretch(1)
        self.buttons: list[QToolButton] = []
        self.viewer: SourceViewer | None = None  # the last passage shown

    def show_citations(self, items: Sequence[Source], *, cited: bool) -> None:
        """One button per citation (hidden when there are none)."""
        for button in self.buttons:
            self._row.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        self.setVisible(bool(items))
        self.label.setText(self.tr("Sources:") if cited else self.tr("Sources given (none cited):"))
        for item in items:
            button = QToolButton()
            button.setObjectName("Small")
            button.setText(f"[{item.number}] {Path(item.path).name}")
            snippet = " ".join(item.text.split())
            # The path and snippet come from documents (or an imported chat): shown as text.
            button.setToolTip(literal_tooltip(f"{source_place(item)}\n\n{snippet[:300]}"))
            button.setAccessibleName(self.tr("Show source ") + str(item.number))
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(self._view_handler(item))
            self._row.insertWidget(self._row.count() - 1, button)
            self.buttons.append(button)

    def _view_handler(self, item: Source) -> Callable[[], Any]:
        def handler() -> None:
            # Runs on the window's thread: a button's clicked is a direct connection.
            self.view(item)

        return handler

    def view(self, item: Source) -> SourceViewer:
        """Show the passage ``item`` cites in its file, in a window of its own."""
        if self.viewer is not None:  # one passage at a time
            self.viewer.close()
            self.viewer.deleteLater()
        self.viewer = SourceViewer(item, self.window())
        self.viewer.opened.connect(self.opened)
        self.viewer.unavailable.connect(self.unavailable)
        if not is_local_file(item.path):  # also said under the transcript, as before
            self.unavailable.emit(
                self.tr("The cited file is not on this computer any more: %1").replace(
                    "%1", item.path
                )
            )
        self.viewer.show()
        self.viewed.emit(self.viewer)
        return self.viewer
