"""The chat list beside the transcript: new, search (titles and message text), rename in
place, delete and export."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.conversations import Conversation
from desktop.ui.look import icon
from desktop.ui.persistence import ChatSaver
from desktop.ui.qmodels import ROW_ROLE, ChatFilter, ConversationListModel


def export_markdown(chat: Conversation) -> str:
    """The chat as a Markdown document (what 'Export…' writes)."""
    lines = [f"# {chat.title}", ""]
    if chat.model:
        lines += [f"_Model: {chat.model}_", ""]
    for turn in chat.turns:
        lines += [f"**{'You' if turn.role == 'user' else 'Assistant'}:**", "", turn.content, ""]
    return "\n".join(lines)


class ChatSidebar(QWidget):
    """Lists the chats; says which one the user picked or wants new or deleted."""

    chosen = Signal(object)  # the Conversation clicked
    new_requested = Signal()
    delete_requested = Signal()

    def __init__(self, chats: ConversationListModel, saver: ChatSaver | None,
                 current: Callable[[], Conversation | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chats = chats
        self._saver = saver
        self._current = current
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        self.new_button = QPushButton(icon("new-chat"), self.tr("New chat"))
        self.new_button.setAccessibleName(self.tr("New chat"))
        self.new_button.setToolTip(self.tr("New chat (Ctrl+N)"))
        self.new_button.clicked.connect(self.new_requested)
        self.search = QLineEdit()
        self.search.setPlaceholderText(self.tr("Search chats"))
        self.search.setAccessibleName(self.tr("Search chats"))
        self.search.setClearButtonEnabled(True)
        self.filter = ChatFilter(self)
        self.filter.setSourceModel(chats)
        self.search.textChanged.connect(self._search)
        self.chat_list = QListView()
        self.chat_list.setObjectName("ChatList")
        self.chat_list.setAccessibleName(self.tr("Conversations"))
        self.chat_list.setModel(self.filter)
        self.chat_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chat_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.chat_list.setEditTriggers(QListView.EditTrigger.DoubleClicked
                                       | QListView.EditTrigger.EditKeyPressed)
        self.chat_list.selectionModel().currentChanged.connect(self._current_changed)
        buttons = QHBoxLayout()
        self.delete_button = QPushButton(icon("delete"), self.tr("Delete"))
        self.delete_button.setObjectName("Danger")
        self.delete_button.setAccessibleName(self.tr("Delete chat"))
        self.delete_button.clicked.connect(self.delete_requested)
        self.export_button = QPushButton(self.tr("Export…"))
        self.export_button.setAccessibleName(self.tr("Export chat as Markdown"))
        self.export_button.clicked.connect(self._export)
        buttons.addWidget(self.delete_button)
        buttons.addWidget(self.export_button)
        for widget in (self.new_button, self.search, self.chat_list):
            layout.addWidget(widget)
        layout.addLayout(buttons)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        chat = current.data(ROW_ROLE)
        if isinstance(chat, Conversation):
            self.chosen.emit(chat)

    def show_chat(self, chat: Conversation) -> None:
        """Highlight ``chat`` in the list (if the search shows it)."""
        row = self._chats.row_of(chat)
        if row >= 0:
            self.chat_list.setCurrentIndex(self.filter.mapFromSource(self._chats.index(row)))

    def _search(self, text: str) -> None:
        matches: set[int] = set()
        if self._saver is not None and text.strip():
            found = self._saver.store.list_conversations(search=text)
            matches = {c.id for c in found}
        self.filter.set_search(text, matches)

    def _export(self) -> None:
        chat = self._current()
        if chat is None:
            return
        name, _ = QFileDialog.getSaveFileName(self, self.tr("Export chat"),
                                              f"{chat.title}.md", "Markdown (*.md)")
        if name:
            with open(name, "w", encoding="utf-8") as out:
                out.write(export_markdown(chat))
