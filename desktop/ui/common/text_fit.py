"""Labels and dialogs whose texts are never cut off, and never widen the window.

Qt sizes a top-level window from its layout's size hint, which ignores height-for-width:
a wrapped label gets the height of its unwrapped hint and the rest of its text is
clipped (the first-run recommendation lost "slower (CPU)" that way). ``TextFitDialog``
asks the layout how tall it must be at the dialog's width whenever it is shown, resized
or told that a text changed (``fit``).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QDialog, QLabel, QSizePolicy, QWidget


class TextFitDialog(QDialog):
    """A dialog at least as tall as its wrapped texts need at its width (window thread)."""

    def fit(self) -> None:
        """Grow (or allow shrinking) to the height the layout needs at the current width."""
        layout = self.layout()
        if layout is None or not layout.hasHeightForWidth():
            return
        need = layout.totalHeightForWidth(self.width())
        if need != self.minimumHeight():
            self.setMinimumHeight(need)
        if self.height() < need:
            self.resize(self.width(), need)

    def say(self, label: QLabel, text: str) -> None:
        """Set ``label``'s text and make room for it."""
        label.setText(text)
        self.fit()

    def showEvent(self, event: QShowEvent) -> None:
        """Fit before the first paint."""
        super().showEvent(event)
        self.fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A narrower dialog wraps into more lines: keep them all in view."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.fit()


# Where a long path, URL or id may break when it does not fit: after these characters
# (a zero-width space is put after each in what is shown; the tooltip keeps the text).
_BREAK_AFTER = "/\\_-.:?&="
_ZWSP = "\u200b"


def breakable(text: str) -> str:
    """``text`` with invisible break opportunities inside long paths, URLs and ids."""
    return "".join(c + _ZWSP if c in _BREAK_AFTER else c for c in text)


class FitLabel(QLabel):
    """A wrapped status or error line that never sets the window's minimum width.

    A QLabel's minimum width is its longest word (a URL, a path): one long error made
    the window wider than the screen, for good. This one takes the width its layout
    gives it and wraps into more lines instead (window thread only).
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # an error quoting "<b>" is not markup
        self.setWordWrap(True)
        policy = self.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
        self.setSizePolicy(policy)
        self.setText(text)

    def setText(self, text: str) -> None:
        """Show ``text`` wrapped to the label's width; the tooltip has it whole."""
        super().setText(breakable(text))
        self.setToolTip(text if len(text) > 80 else "")

    def text(self) -> str:
        """The text as set (without the invisible break opportunities)."""
        return super().text().replace(_ZWSP, "")

    def minimumSizeHint(self) -> QSize:
        """No minimum width from the text; the height of one line."""
        return QSize(0, super().minimumSizeHint().height())


class ElidedLabel(QLabel):
    """One line that is cut with "…" to the width it gets (status bar fields).

    Its size hint never asks for more than ``max_width``, so a long model id cannot
    widen the window; the tooltip holds the whole text (window thread only).
    """

    def __init__(self, max_width: int = 320, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self._max_width = max_width
        policy = self.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Preferred)
        self.setSizePolicy(policy)

    def setText(self, text: str) -> None:
        """Show ``text``, elided to the label's width."""
        self._full = text
        self.updateGeometry()
        self._elide()

    def text(self) -> str:
        """The whole text, as set."""
        return self._full

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._full, Qt.TextElideMode.ElideMiddle, max(self.width(), 1)
        )
        super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")

    def sizeHint(self) -> QSize:
        """The text's width, up to ``max_width``."""
        width = self.fontMetrics().horizontalAdvance(self._full) + 8
        return QSize(min(width, self._max_width), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        """Room for a few characters and the ellipsis."""
        return QSize(min(self.sizeHint().width(), 48), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Elide again at the new width."""
        super().resizeEvent(event)
        self._elide()
