"""The Server screen: start/stop the local OpenAI-compatible API, keys, origins, snippets
and a live request log (no content)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.resolve import looks_like_path
from desktop.server import SETUP_KEY as KEY
from desktop.server import SETUP_MODEL as MODEL
from desktop.server import AccessRecord, KeyInfo, KeyStore
from desktop.server import client_setups as setups
from desktop.server import python_openai_setup as python_openai
from desktop.server import setup_with_context as with_context
from desktop.store import WINDOW_ROUTE
from desktop.ui.common.clipboard import copy_text
from desktop.ui.common.error_text import error_text
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.common.workers import TaskWorker, WorkerPool
from desktop.ui.server.key_rows import key_row
from desktop.ui.server.key_scope import KeyScopeDialog, ScopeChoice
from desktop.ui.server.port_field import PortField, free_port_after, port_free
from desktop.ui.server.request_list import HISTORY_LINES, RequestList

if TYPE_CHECKING:
    from desktop.base.config import EffectiveSettings, Settings
    from desktop.catalog import Catalog, InstalledIndex
    from desktop.engine import Scheduler
    from desktop.resolve import ModelResolver
    from desktop.root.server_handle import ServerHandle
    from desktop.store import UsageRecorder, UsageStore
    from desktop.ui.server.usage_tab import UsageTab


class ServerScreen(Protocol):
    """What the Server screen reads and changes (asked each time: members rebuilt after
    a settings change are the ones used)."""

    @property
    def settings(self) -> Settings:
        """The settings in force."""

    @property
    def effective(self) -> EffectiveSettings:
        """The settings in force and which of them are locked."""

    @property
    def server(self) -> ServerHandle:
        """The local API server: start, stop, whether it runs, its address."""

    @property
    def key_store(self) -> KeyStore:
        """The API's keys."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog (the snippets' model)."""

    @property
    def installed(self) -> InstalledIndex:
        """Downloaded and imported models (the snippets' model)."""

    @property
    def resolver(self) -> ModelResolver:
        """Model reference -> load plan (the snippets' model)."""

    @property
    def scheduler(self) -> Scheduler:
        """The loaded models (the snippets' context length)."""

    @property
    def scheduler_built(self) -> bool:
        """Whether the scheduler exists (asking builds nothing)."""

    @property
    def usage_store(self) -> UsageStore:
        """The API's usage rows (the Usage tab, ``UsageSource``)."""

    def usage_sink(self) -> UsageRecorder | None:
        """The recorder while usage is collected, else None (the Usage tab)."""

    def apply_settings(self, changes: Mapping[str, Any]) -> list[str]:
        """Save and apply ``changes``; the keys that need a restart."""


# The chat model placeholder, not the one inside CODE-MODEL-ID (an autocomplete model).
_MODEL_PLACEHOLDER = re.compile(r"(?<![\w-])" + re.escape(MODEL) + r"(?![\w-])")


def snippet(url: str) -> str:
    """Ready-to-copy code for the ``openai`` client against this server."""
    return python_openai(url) + (
        f"\n# IDEs (Continue, Cline, …): OpenAI-compatible provider, base URL {url}"
    )


def with_model(text: str, model: str | None) -> str:
    """``text`` naming ``model`` where it says MODEL-ID (kept as is when there is none)."""
    return text if model is None else _MODEL_PLACEHOLDER.sub(lambda _m: model, text)


def snippet_model(context: ServerScreen) -> str | None:
    """The chat model the snippets name: the first preloaded chat model, else the first one
    here (imported, downloaded, catalog files on disk); None when none is installed."""
    resolver = context.resolver
    refs: list[str] = [
        *map(str, context.settings.engine.preload),
        *resolver.registered,
        *(m.id for m in context.installed.all()),
        *(e.id for e in context.catalog if e.kind == "chat"),
    ]
    for ref in dict.fromkeys(refs):
        if looks_like_path(ref) and ref not in resolver.registered:
            continue  # the server never accepts a file path as a model id
        try:
            resolver.locate(ref)
            if resolver(ref).kind == "chat":
                return ref
        except EdgeDeskError:
            continue  # not here, not allowed, unreadable: not an id a client can use
    return None


def snippet_context(context: ServerScreen, model: str | None) -> int | None:
    """The context (tokens) of ``model`` the snippets name: what it is loaded with, else
    ``engine.context_length`` when set; None when neither is known (never loads it)."""
    if model is not None and context.scheduler_built:
        for loaded in context.scheduler.loaded():
            if loaded.model_id == model:
                return loaded.report.context_length
    return context.settings.engine.context_length or None


class _RecordBridge(QObject):
    """Carries access records from the server's thread to the window's (queued signal)."""

    record = Signal(object)


class ServerView(QWidget):
    """Run the local API and manage who may call it."""

    state_changed = Signal(bool)  # running

    def __init__(
        self, context: ServerScreen, pool: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._pool = pool
        self._key_store: KeyStore | None = None
        self._key_infos: list[KeyInfo] = []  # the listed keys, row by row
        self.scope_dialog: KeyScopeDialog | None = None  # the one open, if any
        self._bridge = _RecordBridge(self)
        self._bridge.record.connect(self._append_record)
        self._unsubscribe: object = None
        self._listening_to: object = None  # the runner whose log records we show
        # When the list began to get live records: earlier ones come from the usage store.
        self._live_since: float | None = None
        self._earlier_asked = False
        layout = self._build_tabs(context)
        layout.addLayout(self._build_address())
        self.start_with_app = QCheckBox(self.tr("Start the server with EdgeDesk"))
        self.start_with_app.setChecked(context.settings.server.start_with_app)
        self.start_with_app.toggled.connect(lambda on: self._save({"server.start_with_app": on}))
        layout.addWidget(self.start_with_app)
        layout.addLayout(self._build_keys())
        origins = QHBoxLayout()
        self.origins = QLineEdit(", ".join(context.settings.server.allowed_origins))
        self.origins.setPlaceholderText(
            self.tr("Allowed browser origins, comma-separated (none by default)")
        )
        self.origins.setAccessibleName(self.tr("Allowed origins"))
        save_origins = QPushButton(self.tr("Save origins"))
        save_origins.clicked.connect(self._save_origins)
        origins.addWidget(self.origins, 1)
        origins.addWidget(save_origins)
        layout.addLayout(origins)
        self._build_snippets(layout)
        self.log_title = FitLabel()
        layout.addWidget(self.log_title)
        self.log = RequestList()
        layout.addWidget(self.log.filter_box)
        self.log.setAccessibleName(self.tr("Request log"))
        layout.addWidget(self.log, 1)
        self.notice = FitLabel()
        self.notice.setObjectName("Muted")
        layout.addWidget(self.notice)
        self._say_what_is_kept()
        self._refresh()

    def _build_tabs(self, context: ServerScreen) -> QVBoxLayout:
        """The title over two tabs, the server itself and the charts of its usage; returns
        the server tab's layout."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 12, 16, 12)
        title = QLabel(self.tr("Local API server"))
        title.setObjectName("Title")
        outer.addWidget(title)
        self.tabs = QTabWidget()
        outer.addWidget(self.tabs, 1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 8, 0, 0)
        self.tabs.addTab(page, self.tr("Server"))
        self._usage: UsageTab | None = None
        self._usage_page = QWidget()
        self._usage_layout = QVBoxLayout(self._usage_page)
        self._usage_layout.setContentsMargins(0, 0, 0, 0)
        self.tabs.addTab(self._usage_page, self.tr("Usage"))
        self.tabs.currentChanged.connect(lambda i: self.usage if i == 1 else None)
        return layout

    @property
    def usage(self) -> UsageTab:
        """The Usage tab, made when first shown: pyqtgraph takes a second to import."""
        if self._usage is None:
            from desktop.ui.server.usage_tab import UsageTab

            self._usage = UsageTab(self._context)
            self._usage_layout.addWidget(self._usage)
        return self._usage

    def _say_what_is_kept(self) -> None:
        """The log keeps no content, but /v1/responses stores prompts and answers: say
        so, with how long they are kept."""
        days = self._context.settings.retention_days
        kept = (
            self.tr("kept for 1 day")
            if days == 1
            else self.tr("kept for %1 days").replace("%1", str(days))
            if days
            else self.tr("kept until deleted; set a retention period in Settings")
        )
        self.log_title.setText(
            self.tr(
                "Requests (the log keeps no content). Note: /v1/responses stores its "
                "prompts and answers unless a request says store: false — %1."
            ).replace("%1", kept)
        )

    def _build_address(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.toggle = QPushButton(self.tr("Start server"))
        self.toggle.setObjectName("Primary")
        self.toggle.setAccessibleName(self.tr("Start or stop the server"))
        self.toggle.clicked.connect(self.toggle_server)
        self.status = QLabel(self.tr("Stopped"))
        self.address = QLineEdit()
        self.address.setReadOnly(True)
        self.address.setAccessibleName(self.tr("Server address"))
        # The port is typed here (the address above is what the server really uses).
        self.port = PortField(self._context.settings.server.port)
        self.port.editingFinished.connect(self._save_port)
        copy = QPushButton(self.tr("Copy address"))
        copy.setAccessibleName(self.tr("Copy the server address"))
        copy.clicked.connect(lambda: copy_text(self.address.text(), copy))
        self.copy_address = copy
        for widget in (self.toggle, self.status):
            row.addWidget(widget)
        row.addWidget(self.address, 1)
        row.addWidget(self.port)
        row.addWidget(copy)
        return row

    def _save_port(self) -> bool:
        """Save the typed port (through the context, like every setting); False if refused."""
        port = self.port.value()
        if port == self._context.settings.server.port:
            return True
        if not self._save({"server.port": port}):
            return False
        self.notice.setText(
            self.tr(
                "Port %1 saved; the running server keeps its port until it is restarted."
            ).replace("%1", str(port))
            if self.running
            else self.tr("Port %1 saved.").replace("%1", str(port))
        )
        self._refresh()
        return True

    def _build_keys(self) -> QVBoxLayout:
        row = QHBoxLayout()
        self.key_list = QListWidget()
        self.key_list.setAccessibleName(self.tr("API keys"))
        self.key_list.setMaximumHeight(110)
        # A long scope wraps onto more lines: never a sideways scroll to read a key's row.
        self.key_list.setWordWrap(True)
        self.key_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.key_list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.key_list.setAlternatingRowColors(True)  # a key's two lines read as one row
        buttons = QVBoxLayout()
        self.new_key_button = QPushButton(self.tr("New key…"))
        self.new_key_button.clicked.connect(self._ask_key)
        self.edit_button = QPushButton(self.tr("Edit scope…"))
        self.edit_button.setAccessibleName(self.tr("Edit the selected key's scope"))
        self.edit_button.clicked.connect(self._edit_selected)
        self.revoke_button = QPushButton(self.tr("Revoke"))
        self.revoke_button.setObjectName("Danger")
        self.revoke_button.clicked.connect(self._revoke_selected)
        self.key_list.currentRowChanged.connect(lambda _row: self._enable_key_buttons())
        self._enable_key_buttons()
        buttons.addWidget(self.new_key_button)
        buttons.addWidget(self.edit_button)
        buttons.addWidget(self.revoke_button)
        row.addWidget(self.key_list, 1)
        row.addLayout(buttons)
        column = QVBoxLayout()
        column.addLayout(row)
        self.key_row = QWidget()
        shown = QHBoxLayout(self.key_row)
        shown.setContentsMargins(0, 0, 0, 0)
        self.key_field = QLineEdit()
        self.key_field.setReadOnly(True)
        self.key_field.setAccessibleName(self.tr("The new API key"))
        copy_key = QPushButton(self.tr("Copy key"))
        copy_key.setAccessibleName(self.tr("Copy the new API key"))
        copy_key.clicked.connect(lambda: copy_text(self.key_field.text(), copy_key))
        shown.addWidget(self.key_field, 1)
        shown.addWidget(copy_key)
        self.key_row.setVisible(False)
        column.addWidget(self.key_row)
        return column

    @property
    def _keys(self) -> KeyStore:
        # The runner module pulls in uvicorn and FastAPI (~0.5 s): import it only when the
        # Server screen is used, not while the window opens.
        if self._key_store is None:
            # The context's: policy MaxKeyLifetimeDays and the audit log apply here too.
            self._key_store = self._context.key_store
        return self._key_store

    def showEvent(self, event: QShowEvent) -> None:
        """List the keys when the screen is first shown; name a model installed since."""
        if self._key_store is None:
            self._list_keys()
        self._show_snippet()
        self._read_earlier()
        super().showEvent(event)

    def _read_earlier(self) -> None:
        """Once, when first shown, on a worker: the last requests of earlier runs, as the
        usage store kept them (metadata only), under the live ones."""
        if self._earlier_asked:
            return
        self._earlier_asked = True
        before = time.time() if self._live_since is None else self._live_since
        context = self._context

        def read() -> object:
            return context.usage_store.recent(HISTORY_LINES, before=before, skip_route=WINDOW_ROUTE)

        worker = TaskWorker(read, "earlier requests")
        # Unreadable (a locked database): ``failed``, unheard; the live list works the same.
        worker.result.connect(self._earlier_read)
        self._pool.start(worker)

    def _earlier_read(self, _key: str, rows: object) -> None:
        if isinstance(rows, list):
            self.log.add_earlier(rows)

    # ------------------------------------------------------------------ state
    def _build_snippets(self, layout: QVBoxLayout) -> None:
        self._url = ""  # the address the snippets show (set by _refresh)
        self._new_key = ""  # a key created on this visit: shown once, in the snippets too
        self.snippet = QPlainTextEdit()
        self.snippet.setReadOnly(True)
        self.snippet.setAccessibleName(self.tr("Code snippet"))
        self.snippet.setMaximumHeight(170)
        # The same setups docs/api.md shows (Codex CLI, Claude Code, Continue, Zed, Copilot,
        # JetBrains), with this server's real address.
        self.client_picker = QComboBox()
        self.client_picker.setAccessibleName(self.tr("Client to set up"))
        self.client_picker.addItems(list(setups("http://127.0.0.1/v1")))
        self.client_picker.currentIndexChanged.connect(self._show_snippet)
        self.copy_snippet = QPushButton(self.tr("Copy snippet"))
        self.copy_snippet.setAccessibleName(self.tr("Copy the code snippet"))
        self.copy_snippet.clicked.connect(
            lambda: copy_text(self.snippet.toPlainText(), self.copy_snippet)
        )
        pick = QHBoxLayout()
        pick.addWidget(QLabel(self.tr("Use it from")))
        pick.addWidget(self.client_picker, 1)
        pick.addWidget(self.copy_snippet)
        layout.addLayout(pick)
        layout.addWidget(self.snippet)
        self.model_hint = FitLabel()
        self.model_hint.setObjectName("Muted")
        layout.addWidget(self.model_hint)

    def _show_snippet(self) -> None:
        name = self.client_picker.currentText()
        text = snippet(self._url) if name == "Python (openai)" else setups(self._url)[name]
        # Found when the screen is shown (showEvent): while the window opens, the model
        # list (and the hardware probe behind the resolver) is read on a worker instead.
        model = snippet_model(self._context) if self.isVisible() else None
        if self._new_key:  # the key just made, until the user leaves this screen
            text = text.replace(KEY, self._new_key)
        tokens = snippet_context(self._context, model) if self.isVisible() else None
        self.snippet.setPlainText(with_context(with_model(text, model), tokens))
        self.model_hint.setText(
            self.tr(
                "No chat model is installed yet: download or import one on the Models "
                "screen, then use its id in place of %1."
            ).replace("%1", MODEL)
            if model is None
            else self.tr(
                "%1 is a chat model on this device; any id from /v1/models works."
            ).replace("%1", model)
        )

    @property
    def running(self) -> bool:
        """Whether the server accepts connections."""
        return self._context.server.running

    def _refresh(self) -> None:
        running = self.running
        self.toggle.setText(self.tr("Stop server") if running else self.tr("Start server"))
        self.status.setText(self.tr("● Running") if running else self.tr("Stopped"))
        self.status.setStyleSheet("color: #2e9d57;" if running else "")  # a green dot
        self.log.setPlaceholderText(
            self.tr(
                "No requests yet. The server is running: call it from another program "
                "(the examples above show how), and each request is listed here."
            )
            if running
            else self.tr(
                "No requests yet. Start the server and call it "
                "from another program: each request is listed "
                "here."
            )
        )
        url = self._context.server.url
        self.address.setText(url)
        self._url = url
        self._show_snippet()
        locked = self._context.effective.is_locked
        self.start_with_app.setEnabled(not locked("server.start_with_app"))
        self.origins.setEnabled(not locked("server.allowed_origins"))
        self.port.setEnabled(not locked("server.port"))

    def toggle_server(self) -> TaskWorker:
        """Start or stop the server on a worker (both can take a moment)."""
        server = self._context.server
        if server.running:
            worker = TaskWorker(server.stop)
        else:
            # A port typed but not yet confirmed (Enter, leaving the field) is the one used.
            self._save_port()
            # Rebuilt when settings were saved since it was built (e.g. allowed origins).
            runner = server.to_start()
            if self._listening_to is not runner:
                if callable(self._unsubscribe):
                    self._unsubscribe()
                self._unsubscribe = runner.subscribe(self._bridge.record.emit)
                self._listening_to = runner
                if self._live_since is None:
                    self._live_since = time.time()
            worker = TaskWorker(runner.start)
        self.toggle.setEnabled(False)
        worker.failed.connect(self._failed)
        worker.done.connect(self._toggled)
        self._pool.start(worker)
        return worker

    def _failed(self, _key: str, message: str) -> None:
        server = self._context.settings.server
        if not self.running and not port_free(server.host, server.port):
            message = self._port_taken(server.host, server.port)
        self.notice.setText(message)

    def _port_taken(self, host: str, port: int) -> str:
        """Say the port is taken and offer the next free one in the field (not saved until
        the user starts the server with it or confirms it)."""
        self.port.setFocus()
        free = free_port_after(host, port)
        if free is None:
            return self.tr(
                "Port %1 is used by another program. Type another port beside the address "
                "and start the server again."
            ).replace("%1", str(port))
        self.port.setValue(free)
        self.port.selectAll()
        return (
            self.tr(
                "Port %1 is used by another program. Port %2 is free and filled in beside "
                "the address: press Start server to use it, or type another."
            )
            .replace("%1", str(port))
            .replace("%2", str(free))
        )

    def _toggled(self) -> None:
        self.toggle.setEnabled(True)
        self._refresh()
        self.state_changed.emit(self.running)

    def _append_record(self, record: AccessRecord) -> None:
        self.log.add(record)
        if record.key_name and self._key_store is not None:
            self._list_keys()  # its "last used" is now: said at once, not after a restart

    # ------------------------------------------------------------------ keys and origins
    def keys_changed_on_disk(self) -> None:
        """Keys were made, revoked or used (``edgedesk keys``, a server in another
        process): list them again, if this screen has listed them already."""
        if self._key_store is not None:
            self._list_keys()

    def _list_keys(self) -> None:
        picked = self._selected()
        self.key_list.clear()
        self._key_infos = []
        try:
            keys = self._keys.list()
        except EdgeDeskError as exc:
            self.notice.setText(error_text(exc))
            return
        self._key_infos = keys
        if not keys:  # an empty box says nothing: say what a key is for
            require = self._context.settings.server.require_key
            empty = QListWidgetItem(
                self.tr("No API keys yet. Every request needs one: New key… makes it.")
                if require
                else self.tr("No API keys; this server answers without one (--no-auth).")
            )
            empty.setFlags(Qt.ItemFlag.NoItemFlags)  # not a key: nothing to pick or revoke
            self.key_list.addItem(empty)
        now = self._keys.clock()
        for info in keys:
            # "2 min ago" in the window's language; the exact local times on hover.
            text, tip = key_row(info, now)
            item = QListWidgetItem(text)
            item.setToolTip(tip)
            self.key_list.addItem(item)
            if picked is not None and info.name == picked.name:
                self.key_list.setCurrentRow(self.key_list.count() - 1)  # still selected
        self._enable_key_buttons()

    def _enable_key_buttons(self) -> None:
        """Edit scope… and Revoke act on the selected key: enabled only while one is."""
        picked = self._selected() is not None
        why = "" if picked else self.tr("Select a key in the list first.")
        for button in (self.edit_button, self.revoke_button):
            button.setEnabled(picked)
            button.setToolTip(why)

    def create_key(self, name: str, scope: ScopeChoice | None = None) -> str | None:
        """Make a key (limited to ``scope``) and show it once; None if refused."""
        scope = scope or ScopeChoice()
        if scope.endpoints == ():
            self.notice.setText(self.tr("Pick at least one endpoint for the key."))
            return None
        try:
            key = self._keys.create(
                name,
                models=scope.models,
                endpoints=scope.endpoints,
                expires_in_s=scope.expires_in_s,
                rate_per_min=scope.rate_per_min,
            )
        except EdgeDeskError as exc:
            self.notice.setText(error_text(exc))
            return None
        # Shown here and in the snippets (not put on the clipboard behind the user's
        # back), until the user leaves the screen: then it is not shown again.
        self._new_key = key
        self.key_field.setText(key)
        self.key_row.setVisible(True)
        self.notice.setText(
            self.tr(
                "New key for %1: copy it now, it is shown only while this screen is open."
            ).replace("%1", name)
        )
        self._list_keys()
        self._show_snippet()
        return key

    def hideEvent(self, event: QHideEvent) -> None:
        """Leaving the screen hides a new key for good (it is shown only once)."""
        if self._new_key:
            self._new_key = ""
            self.key_field.clear()
            self.key_row.setVisible(False)
            self.notice.setText("")
            self._show_snippet()
        super().hideEvent(event)

    def edit_scope(self, name: str, scope: ScopeChoice) -> bool:
        """Replace key ``name``'s scope (its read-only collection kept); False if refused."""
        if scope.endpoints == ():
            self.notice.setText(self.tr("Pick at least one endpoint for the key."))
            return False
        kept = next((i.scope.read_only_docs for i in self._key_infos if i.name == name), None)
        try:
            self._keys.set_scope(
                name,
                models=scope.models,
                endpoints=scope.endpoints,
                expires_in_s=scope.expires_in_s,
                rate_per_min=scope.rate_per_min,
                read_only_docs=kept,
            )
        except EdgeDeskError as exc:
            self.notice.setText(error_text(exc))
            return False
        self.notice.setText(
            self.tr("Changed the scope of the key for %1; it applies to its next request.").replace(
                "%1", name
            )
        )
        self._list_keys()
        return True

    def _open_dialog(self, info: KeyInfo | None) -> KeyScopeDialog:
        dialog = KeyScopeDialog(
            self,
            name=None if info is None else info.name,
            scope=None if info is None else info.scope,
            now=self._keys.clock(),
            max_days=self._context.settings.server.max_key_lifetime_days,
        )
        if info is None:
            dialog.accepted.connect(
                lambda: (
                    self.create_key(dialog.client_name(), dialog.choice())
                    if dialog.client_name()
                    else None
                )
            )
        else:
            dialog.accepted.connect(lambda: self.edit_scope(info.name, dialog.choice()))
        dialog.finished.connect(dialog.deleteLater)
        self.scope_dialog = dialog
        dialog.open()  # window-modal, without a nested event loop
        return dialog

    def _ask_key(self) -> KeyScopeDialog:
        return self._open_dialog(None)

    def _selected(self) -> KeyInfo | None:
        row = self.key_list.currentRow()
        return self._key_infos[row] if 0 <= row < len(self._key_infos) else None

    def _edit_selected(self) -> KeyScopeDialog | None:
        info = self._selected()
        return None if info is None else self._open_dialog(info)

    def _revoke_selected(self) -> None:
        info = self._selected()
        if info is None:
            return
        name = info.name
        try:
            self._keys.revoke(name)
        except EdgeDeskError as exc:
            self.notice.setText(error_text(exc))
        self._list_keys()

    def _save_origins(self) -> None:
        origins = [o.strip() for o in self.origins.text().split(",") if o.strip()]
        if self._save({"server.allowed_origins": origins}):
            self.notice.setText(self.tr("Saved; applies the next time the server starts."))

    def _save(self, changes: dict[str, object]) -> bool:
        try:
            self._context.apply_settings(changes)
        except EdgeDeskError as exc:
            self.notice.setText(error_text(exc))
            return False
        return True

    def shutdown(self) -> None:
        """Stop listening for log records (the context stops the server itself)."""
        if self._usage is not None:
            self._usage.shutdown()
        if callable(self._unsubscribe):
            self._unsubscribe()
            self._unsubscribe = None
            self._listening_to = None
