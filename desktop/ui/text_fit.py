"""Dialogs whose word-wrapped labels are never cut off.

Qt sizes a top-level window from its layout's size hint, which ignores height-for-width:
a wrapped label gets the height of its unwrapped hint and the rest of its text is
clipped (the first-run recommendation lost "slower (CPU)" that way). ``TextFitDialog``
asks the layout how tall it must be at the dialog's width whenever it is shown, resized
or told that a text changed (``fit``).
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QDialog, QLabel


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
