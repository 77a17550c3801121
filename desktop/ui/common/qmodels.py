"""Qt item models over the catalog rows and the conversations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractListModel,
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from desktop.base.filebytes import format_bytes
from desktop.catalog import CatalogRow, Verdict
from desktop.chat import DEFAULT_TITLE, Conversation
from desktop.ui.common.core_text import kind_text, tier_text, verdict_text
from desktop.ui.common.rich_text import literal_tooltip

AnyIndex = QModelIndex | QPersistentModelIndex
ROW_ROLE = Qt.ItemDataRole.UserRole + 1

# Badge colours readable on both the light and the dark theme.
FIT_COLOURS = {
    str(Verdict.GPU): "#2e9d57",
    str(Verdict.PARTIAL): "#c98a12",
    str(Verdict.CPU): "#c98a12",
    str(Verdict.NO): "#c8453b",
}


class FitDelegate(QStyledItemDelegate):
    """Draws the Fit badge in its colour on a selected row too (selected text is drawn
    in the selection's colour otherwise, and the badge turned black)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        """Qt's options, with the badge's colour kept for the selected state."""
        super().initStyleOption(option, index)
        colour = index.data(Qt.ItemDataRole.ForegroundRole)
        if isinstance(colour, QColor):
            option.palette.setColor(QPalette.ColorRole.HighlightedText, colour)


class ChatModelChoice(tuple[str, str]):
    """A chat model the chat offers: ``(label, reference)`` as before, and ``remote``,
    the remote engine it runs on ("": on this device), so the chat can say truthfully
    whether what is written leaves the device."""

    remote: str

    def __new__(cls, label: str, ref: str, remote: str = "") -> ChatModelChoice:
        """The pair ``(label, ref)``, carrying ``remote``."""
        choice = super().__new__(cls, (label, ref))
        choice.remote = remote
        return choice


def human_size(value: int | None) -> str:
    """A file or download size as ``format_bytes`` writes it; "—" when unknown."""
    return format_bytes(value) if value else "—"


class CatalogTableModel(QAbstractTableModel):
    """The catalog (plus imported files) as a table: one row per model."""

    HEADERS = (
        QT_TRANSLATE_NOOP("CatalogTableModel", "Model"),
        QT_TRANSLATE_NOOP("CatalogTableModel", "Kind"),
        QT_TRANSLATE_NOOP("CatalogTableModel", "Tier"),
        QT_TRANSLATE_NOOP("CatalogTableModel", "Quant"),
        QT_TRANSLATE_NOOP("CatalogTableModel", "Size"),
        QT_TRANSLATE_NOOP("CatalogTableModel", "Fit"),
        QT_TRANSLATE_NOOP("CatalogTableModel", "Status"),
    )

    def __init__(self, rows: Sequence[CatalogRow] = ()) -> None:
        super().__init__()
        self._rows = list(rows)
        self._status: dict[str, str] = {}

    def set_rows(self, rows: Sequence[CatalogRow]) -> None:
        """Replace every row (after a download, import or hardware change)."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def set_status(self, model_id: str, status: str) -> None:
        """Show a transient status (``downloading 42%``) in the Status column."""
        self._status[model_id] = status
        for number, row in enumerate(self._rows):
            if row.id == model_id:
                cell = self.index(number, len(self.HEADERS) - 1)
                self.dataChanged.emit(cell, cell)

    def clear_status(self, model_id: str) -> None:
        """Show the row's own status again (installed, or nothing)."""
        if self._status.pop(model_id, None) is not None:
            self.set_rows(self._rows)

    def row_at(self, number: int) -> CatalogRow:
        """The row shown at ``number``."""
        return self._rows[number]

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Rows under the (flat) root."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Fixed columns."""
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles (translated by the view's context)."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.tr(str(self.HEADERS[section]))
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text, the badge colour of the Fit column, and the row itself."""
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        return self._decoration(row, column, role)

    def _decoration(self, row: CatalogRow, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.TextAlignmentRole:
            # One baseline for every cell: a Chinese name (a fallback font, other metrics)
            # otherwise sat higher than the columns beside it.
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column == 5:
            return QColor(FIT_COLOURS.get(row.fit, "#888888"))
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return literal_tooltip(f"{row.repo}\n{row.id}")
        return None

    def _text(self, row: CatalogRow, column: int) -> str:
        if column == 6:
            if row.id in self._status:
                return self._status[row.id]
            return self.tr("installed") if row.installed else ""
        cells = (
            row.name,
            kind_text(row.kind),
            tier_text(row.tier),
            row.recommended_quant or "—",
            human_size(row.size_bytes),
            f"● {verdict_text(row.fit)}",
        )
        return cells[column]


class ConversationListModel(QAbstractListModel):
    """The chats in the sidebar, newest first; ``renamed`` fires after an in-place rename."""

    renamed = Signal(object)  # the Conversation

    def __init__(self) -> None:
        super().__init__()
        self._chats: list[Conversation] = []

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Number of chats."""
        return 0 if parent.isValid() else len(self._chats)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The chat's title (with a marker for ephemeral chats), or the chat itself."""
        if not index.isValid():
            return None
        chat = self._chats[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            # The default title is the core's English words: shown in the window's language.
            title = self.tr("New chat") if chat.title == DEFAULT_TITLE else chat.title
            # First, not last: a long title was cut off with the marker in it.
            return f"⌀ {title}" if chat.ephemeral else title
        if role == Qt.ItemDataRole.EditRole:
            return chat.title  # renaming edits the title, not the marker
        if role == ROW_ROLE:
            return chat
        if role == Qt.ItemDataRole.ToolTipRole:
            return literal_tooltip(chat.model) if chat.model else None
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        """Chats can be selected and renamed in place."""
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if index.isValid() else base

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Rename a chat (empty names are ignored)."""
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        name = " ".join(str(value).split())
        if not name:
            return False
        self._chats[index.row()].title = name
        self.dataChanged.emit(index, index)
        self.renamed.emit(self._chats[index.row()])
        return True

    def add(self, chat: Conversation) -> QModelIndex:
        """Put ``chat`` at the top and return its index."""
        self.beginInsertRows(QModelIndex(), 0, 0)
        self._chats.insert(0, chat)
        self.endInsertRows()
        return self.index(0)

    def remove(self, chat: Conversation) -> None:
        """Drop ``chat`` from the list."""
        number = self.row_of(chat)
        if number >= 0:
            self.beginRemoveRows(QModelIndex(), number, number)
            del self._chats[number]
            self.endRemoveRows()

    def row_of(self, chat: Conversation) -> int:
        """The row of ``chat`` or -1."""
        return next((n for n, c in enumerate(self._chats) if c.id == chat.id), -1)

    def refresh(self, chat: Conversation) -> None:
        """Repaint ``chat`` after its title changed."""
        number = self.row_of(chat)
        if number >= 0:
            cell = self.index(number)
            self.dataChanged.emit(cell, cell)

    def chats(self) -> list[Conversation]:
        """All chats, newest first."""
        return list(self._chats)


class ChatFilter(QSortFilterProxyModel):
    """Chats whose title contains the search text, or whose messages matched in the store."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._matches: set[int] = set()

    def set_search(self, text: str, store_matches: set[int]) -> None:
        """Filter by ``text`` in titles plus the stored chats in ``store_matches``."""
        self.beginFilterChange()
        self._text = text.casefold().strip()
        self._matches = store_matches
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        """Keep a row when no search is active or it matches."""
        if not self._text:
            return True
        chat = self.sourceModel().index(source_row, 0, source_parent).data(ROW_ROLE)
        if not isinstance(chat, Conversation):
            return False
        return self._text in chat.title.casefold() or chat.store_id in self._matches
