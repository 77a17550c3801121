"""Copying to the clipboard with feedback: "Copied" shows by what was clicked.

Window's thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QPoint, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractButton, QToolTip, QWidget

FEEDBACK_MS = 1500  # long enough to be read, short enough not to linger


def copied_text() -> str:
    """The word the feedback shows, in the window's language."""
    return QCoreApplication.translate("Clipboard", "Copied")


def copy_text(text: str, near: QWidget, at: QPoint | None = None) -> None:
    """Put ``text`` on the clipboard and say "Copied" by ``near`` (at ``at``, global,
    when given: a link inside a text): as a tip, and on the button itself if it has words."""
    QGuiApplication.clipboard().setText(text)
    word = copied_text()
    point = at if at is not None else near.mapToGlobal(near.rect().center())
    QToolTip.showText(point, word, near, near.rect(), FEEDBACK_MS)
    if isinstance(near, QAbstractButton) and near.text() and near.text() != word:
        label = near.text()
        near.setText(word)
        QTimer.singleShot(FEEDBACK_MS, near, lambda: near.setText(label))
