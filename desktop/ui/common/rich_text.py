"""A read-only rich-text block whose height follows its text: the parts of a chat answer.

A word-wrapped ``QLabel`` asks Qt to lay its rich text out again for every
height-for-width question the layouts ask, several times per refresh; a 3,000-character
answer with code took 40–60 ms per streamed refresh, blocking the window. A
``QTextBrowser`` lays its document out once per change and reports the height itself:
about 12 ms for the same answer (measured by the responsiveness benchmark in the note).
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget


def literal_tooltip(text: str) -> str:
    """Tooltip rich text that shows ``text`` exactly as written, tags and line breaks too.

    Qt reads a tooltip as HTML whenever its first line looks like markup, so text from
    documents, models or an imported chat could otherwise fetch images or restyle the tip.
    """
    return f"<p style='white-space:pre-wrap'>{escape(text, quote=False)}</p>"


class RichTextPart(QTextBrowser):
    """Shows Qt rich-text HTML at its natural height; links only emit ``linkActivated``."""

    linkActivated = Signal(str)  # the same signal QLabel has, so callers need not care

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._html = ""
        self.setOpenLinks(False)  # nothing in a chat may navigate or reach the network
        self.setOpenExternalLinks(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.document().setDocumentMargin(0)
        self.viewport().setAutoFillBackground(False)
        self.anchorClicked.connect(self._clicked)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.setFixedHeight(0)

    def setText(self, html: str) -> None:
        """Show ``html`` (Qt rich text)."""
        self._html = html
        self.setHtml(html)

    def text(self) -> str:
        """The HTML last given to ``setText``."""
        return self._html

    def sizeHint(self) -> QSize:
        """As wide as the layout allows, as tall as the text."""
        return QSize(super().sizeHint().width(), self.height())

    def wheelEvent(self, event: QWheelEvent) -> None:
        """Let the transcript scroll: this block never scrolls itself."""
        event.ignore()

    def _fit(self) -> None:
        height = round(self.document().size().height())
        if height != self.height():
            self.setFixedHeight(height)

    def _clicked(self, url: QUrl) -> None:
        self.linkActivated.emit(url.toString())
