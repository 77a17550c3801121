"""The chat list beside the transcript: new, search (titles and message text), rename
(F2, double-click, context menu), delete, export (Markdown or JSON) and import."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.chat import DEFAULT_TITLE, ChatSaver, Conversation, tools_switch
from desktop.store import (
    SEALED_SUFFIX,
    folder_for,
    is_sealed,
    reader_beside,
    seal,
    unseal,
    write_beside,
)
from desktop.ui.common.error_text import error_text
from desktop.ui.common.look import icon
from desktop.ui.common.qmodels import ROW_ROLE, ChatFilter, ConversationListModel

SEARCH_DELAY_MS = 200  # search once typing pauses, not on every keystroke
# Characters no file name may hold on Windows (and "/" nowhere), and control characters.
_NOT_IN_NAMES = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


def file_name(title: str) -> str:
    """``title`` as a file name any system accepts ("chat" when nothing is left)."""
    name = _NOT_IN_NAMES.sub("_", title).strip().rstrip(". ")
    return name[:80] or "chat"


class ChatSidebar(QWidget):
    """Lists the chats; says which one the user picked or wants new or deleted."""

    chosen = Signal(object)  # the Conversation clicked
    new_requested = Signal()
    delete_requested = Signal()
    notice = Signal(str)  # a sentence for the user (e.g. why nothing was exported)
    imported = Signal(object)  # the list of Conversations an import added

    def __init__(
        self,
        chats: ConversationListModel,
        saver: ChatSaver | None,
        current: Callable[[], Conversation | None],
        parent: QWidget | None = None,
    ) -> None:
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
        # The message search is a store query on this (the UI) thread: run it once the
        # user pauses, so typing stays smooth however many chats there are.
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._run_search)
        self.search.textChanged.connect(self._search_timer.start)
        self.chat_list = QListView()
        self.chat_list.setObjectName("ChatList")
        self.chat_list.setAccessibleName(self.tr("Conversations"))
        self.chat_list.setModel(self.filter)
        self.chat_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chat_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self._build_renaming()
        self.chat_list.selectionModel().currentChanged.connect(self._current_changed)
        buttons = QHBoxLayout()
        self.delete_button = QPushButton(icon("delete"), self.tr("Delete"))
        self.delete_button.setObjectName("Danger")
        self.delete_button.setAccessibleName(self.tr("Delete chat"))
        self.delete_button.clicked.connect(self.delete_requested)
        self.export_button = QPushButton(self.tr("Export…"))
        self.export_button.setAccessibleName(self.tr("Export chat as Markdown or JSON"))
        self.export_button.clicked.connect(self._export)
        # An icon beside New chat (both add chats): a worded button made the list wider.
        self.import_button = QPushButton(icon("import"), "")
        self.import_button.setToolTip(self.tr("Import chats from a JSON export…"))
        self.import_button.setAccessibleName(self.tr("Import chats from a JSON export"))
        self.import_button.clicked.connect(self._ask_import)
        buttons.addWidget(self.delete_button)
        buttons.addWidget(self.export_button)
        # Three buttons in the bottom row made the list, and so the window, wider.
        top = QHBoxLayout()
        top.addWidget(self.new_button, 1)
        top.addWidget(self.import_button)
        layout.addLayout(top)
        for widget in (self.search, self.chat_list):
            layout.addWidget(widget)
        layout.addLayout(buttons)

    def _build_renaming(self) -> None:
        # Renaming opens a box as wide as the title (the list's own editor is as narrow as
        # the list and cut long titles off): F2, double-click or the context menu.
        self.chat_list.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.chat_list.doubleClicked.connect(self.rename_current)
        self.chat_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.chat_list.customContextMenuRequested.connect(self._menu)
        rename = QShortcut(QKeySequence(Qt.Key.Key_F2), self.chat_list)
        rename.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        rename.activated.connect(self.rename_current)
        self.rename_dialog: QInputDialog | None = None  # open while a rename is asked
        self._renaming: Conversation | None = None  # the chat that dialog renames
        self.menu: QMenu | None = None  # the list's context menu, while open

    def _menu(self, point: QPoint) -> None:
        index = self.chat_list.indexAt(point)
        if not index.isValid():
            return
        self.chat_list.setCurrentIndex(index)
        menu = QMenu(self)
        menu.addAction(self.tr("Rename…") + "\tF2", self.rename_current)
        menu.addAction(self.tr("Export…"), self._export)
        menu.addSeparator()
        menu.addAction(self.tr("Delete"), self.delete_requested.emit)
        self.menu = menu
        menu.popup(self.chat_list.viewport().mapToGlobal(point))

    def rename_current(self) -> None:
        """Ask for a new title for the highlighted chat, its whole title in the box."""
        index = self.chat_list.currentIndex()
        chat = index.data(ROW_ROLE)
        if not isinstance(chat, Conversation):
            return
        dialog = QInputDialog(self)
        dialog.setWindowTitle(self.tr("Rename chat"))
        dialog.setLabelText(self.tr("Title:"))
        title = self.tr("New chat") if chat.title == DEFAULT_TITLE else chat.title
        dialog.setTextValue(title)
        # As wide as the title (within reason): the whole of it shows while editing.
        width = dialog.fontMetrics().horizontalAdvance(title) + 80
        dialog.resize(max(360, min(width, 720)), dialog.sizeHint().height())
        dialog.textValueSelected.connect(self._renamed)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.rename_dialog = dialog
        self._renaming = chat
        dialog.open()

    def _renamed(self, text: str) -> None:
        self.rename_dialog = None
        row = -1 if self._renaming is None else self._chats.row_of(self._renaming)
        if row >= 0:
            self._chats.setData(self._chats.index(row), text, Qt.ItemDataRole.EditRole)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        chat = current.data(ROW_ROLE)
        if isinstance(chat, Conversation):
            self.chosen.emit(chat)

    def show_chat(self, chat: Conversation) -> None:
        """Highlight ``chat`` in the list (if the search shows it)."""
        row = self._chats.row_of(chat)
        if row >= 0:
            self.chat_list.setCurrentIndex(self.filter.mapFromSource(self._chats.index(row)))

    def _run_search(self) -> None:
        text = self.search.text()
        matches: set[int] = set()
        if self._saver is not None and text.strip():
            found = self._saver.store.list_conversations(search=text)
            matches = {c.id for c in found}
        self.filter.set_search(text, matches)

    def export_markdown(self) -> str | None:
        """The shown chat as Markdown, exactly as ``edgedesk chats export`` writes it
        (reasoning, sources, date, collection); None while nothing of it is saved."""
        chat = self._current()
        if chat is None or chat.store_id is None or self._saver is None:
            return None
        # Ephemeral chats have a (negative) id in the store's in-memory part, so this
        # exports them too without anything reaching the disk.
        return self._saver.store.export_markdown([chat.store_id])

    def _export(self) -> None:
        chat = self._current()
        if chat is None or not chat.turns:
            # An empty file would look like a failed export; say why there is none.
            self.notice.emit(self.tr("Nothing to export: this chat has no messages yet."))
            return
        if chat.store_id is None or self._saver is None:
            return
        markdown, json_files = "Markdown (*.md)", "JSON (*.json)"
        locked = self.tr("Encrypted, opened with a passphrase (*%1)").replace("%1", SEALED_SUFFIX)
        name, chosen = QFileDialog.getSaveFileName(
            self,
            self.tr("Export chat"),
            f"{file_name(chat.title)}.md",
            f"{markdown};;{json_files};;{locked}",
        )
        if not name:
            return
        encrypt = chosen == locked or name.lower().endswith(SEALED_SUFFIX)
        as_json = encrypt or chosen == json_files or name.lower().endswith(".json")
        self.export_to(name, chat.store_id, as_json=as_json, encrypt=encrypt)

    def export_to(self, name: str, store_id: int, *, as_json: bool, encrypt: bool = False) -> bool:
        """Write one chat to ``name`` (encrypted: JSON sealed with a passphrase asked now)."""
        if self._saver is None:
            return False
        store = self._saver.store
        # Exactly what `edgedesk chats export` writes (JSON: what `chats import` reads),
        # pictures and files beside it; a sealed export keeps them inside, encrypted.
        files = None if encrypt else folder_for(Path(name))
        text = (
            store.export_json([store_id], files=files)
            if as_json
            else store.export_markdown([store_id], files=files)
        )
        data = text.encode("utf-8", "surrogatepass")
        if encrypt:
            passphrase = self.ask_passphrase(True)
            if not passphrase:
                return False
            data = seal(data, passphrase)
        try:
            with open(name, "wb") as out:
                out.write(data)
            if files is not None:
                write_beside(Path(name), store.export_files([store_id]))
        except OSError as exc:
            self.notice.emit(
                self.tr("The chat was not exported: %1").replace("%1", exc.strerror or str(exc))
            )
            return False
        except EdgeDeskError as exc:
            self.notice.emit(error_text(exc))
            return False
        # The event `edgedesk chats export` records: the format and how many, no content.
        self._saver.audit.record(
            "chats.exported",
            format="json" if as_json else "md",
            conversations=1,
            to="file",
            encrypted=encrypt,
            source="window",
        )
        return True

    def ask_passphrase(self, new: bool) -> str | None:
        """A passphrase from the user (``new``: typed twice); None when cancelled."""
        title = self.tr("Encrypted export")
        label = (
            self.tr("Passphrase for this export (needed to import it):")
            if new
            else self.tr("Passphrase of this encrypted export:")
        )
        first, ok = QInputDialog.getText(self, title, label, QLineEdit.EchoMode.Password)
        if not ok or not first:
            return None
        if new:
            again, ok = QInputDialog.getText(
                self, title, self.tr("The same passphrase again:"), QLineEdit.EchoMode.Password
            )
            if not ok:
                return None
            if again != first:
                self.notice.emit(self.tr("The two passphrases differ; nothing was exported."))
                return None
        return str(first)

    def _ask_import(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Import chats"),
            "",
            self.tr("Chat exports (*.json *%1)").replace("%1", SEALED_SUFFIX),
        )
        if name:
            self.import_file(name)

    def import_file(self, name: str) -> list[Conversation]:
        """Add the chats of a JSON export (all of them or none) to the list; returns them."""
        if self._saver is None:
            return []
        try:
            with open(name, "rb") as source:
                data = source.read()
            if is_sealed(data):
                passphrase = self.ask_passphrase(False)
                if passphrase is None:
                    return []
                data = unseal(data, passphrase)  # a wrong one: said, nothing added
            text = data.decode("utf-8-sig")
            added = self._saver.store.import_json(text, reader_beside(Path(name)))
        except (OSError, UnicodeDecodeError) as exc:
            self.notice.emit(self.tr("The file could not be read: %1").replace("%1", str(exc)))
            return []
        except EdgeDeskError as exc:
            self.notice.emit(error_text(exc))
            return []
        chats = [
            Conversation(
                model=c.model or "",
                title=c.title or DEFAULT_TITLE,
                ephemeral=c.ephemeral,
                collection=c.collection or "",
                think=c.think,
                tools=tools_switch(c.parameters),
                store_id=c.id,
                loaded=False,
            )
            for c in added
        ]
        self.imported.emit(chats)
        self.notice.emit(
            self.tr("Imported %1 chats.").replace("%1", str(len(chats)))
            if len(chats) != 1
            else self.tr("Imported 1 chat.")
        )
        return chats
