"""The in-app viewer of a cited passage: its file (its page, for a PDF) with the cited
lines marked and scrolled into view, and Open file for the desktop's own viewer.

The file is read as indexing read it (``retrieval._loaders.numbered_lines``), so the
lines counted in the citation are the lines marked. A file that is gone or cannot be
read any more shows the passage as it was stored with the answer, and says so.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.retrieval import SkipFile, numbered_lines
from desktop.store import Source
from desktop.ui.common.core_text import skip_reason_text, source_place

MARK = QColor(255, 221, 87, 110)  # the cited lines: a yellow both themes' text reads on


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


class SourceViewer(QDialog):
    """One cited passage in its file. Window's thread only (reads the file when made)."""

    opened = Signal(str)  # the path handed to the desktop's viewer
    unavailable = Signal(str)  # a sentence for the user: Open file could not open it

    def __init__(self, source: Source, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.setObjectName("SourceViewer")
        self.setWindowTitle(
            self.tr("Source [%1]: %2")
            .replace("%1", str(source.number))
            .replace("%2", Path(source.path).name)
        )
        self.resize(760, 560)
        layout = QVBoxLayout(self)
        self.location = QLabel(source_place(source))
        self.location.setTextFormat(Qt.TextFormat.PlainText)  # a path from user data
        self.location.setWordWrap(True)
        self.location.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.location)
        self.note = QLabel()
        self.note.setObjectName("Muted")
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        layout.addWidget(self.note)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName(self.tr("Cited document"))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = QPushButton(self.tr("Open file"))
        self.open_button.setToolTip(
            self.tr("Open the file in the program this computer opens it with")
        )
        self.open_button.clicked.connect(self._open)
        buttons.addButton(self.open_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.marked: tuple[int, int] = (0, 0)  # the lines marked (1-based, inclusive)
        self._fill()

    def _fill(self) -> None:
        source = self.source
        lines: list[str] = []
        if is_local_file(source.path):
            try:
                lines = numbered_lines(Path(source.path), source.page)
            except SkipFile as exc:
                why = skip_reason_text(exc.reason)
                self._say(
                    self.tr(
                        "The file cannot be shown here (%1); this is the passage as it was cited."
                    ).replace("%1", why)
                )
        else:
            self._say(
                self.tr(
                    "The file is not on this computer any more; this is the "
                    "passage as it was cited."
                )
            )
        self.open_button.setEnabled(is_local_file(source.path))
        if lines and source.line_start <= len(lines):
            self.text.setPlainText("\n".join(lines))
            self._mark(source.line_start, min(source.line_end, len(lines)))
        else:
            if lines:  # the file changed since: its lines no longer reach the passage
                self._say(
                    self.tr(
                        "The file has changed since it was indexed; this is the "
                        "passage as it was cited."
                    )
                )
            self.text.setPlainText(source.text)
            self._mark(1, max(1, source.text.count("\n") + 1))

    def _say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(True)

    def _mark(self, first: int, last: int) -> None:
        """Colour lines ``first``..``last`` and scroll them into the middle of the view."""
        document = self.text.document()
        start = document.findBlockByNumber(first - 1)
        end = document.findBlockByNumber(last - 1)
        cursor = QTextCursor(start)
        cursor.setPosition(
            end.position() + max(end.length() - 1, 0), QTextCursor.MoveMode.KeepAnchor
        )
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        selection.format.setBackground(MARK)
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        self.text.setExtraSelections([selection])
        self.marked = (first, last)
        self.text.setTextCursor(QTextCursor(start))
        self.text.centerCursor()

    def marked_text(self) -> str:
        """The words of the marked lines (what the citation points at)."""
        document = self.text.document()
        first, last = self.marked
        return "\n".join(document.findBlockByNumber(n - 1).text() for n in range(first, last + 1))

    def _open(self) -> None:
        path = self.source.path
        if open_source(path):
            self.opened.emit(path)
        else:
            self.unavailable.emit(
                self.tr(
                    "No program on this computer opens this file; open it yourself: %1"
                ).replace("%1", path)
            )
