"""The main window: navigation, the screens, the status bar and a clean shutdown."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import (
    QCloseEvent,
    QCursor,
    QGuiApplication,
    QKeySequence,
    QScreen,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QSystemTrayIcon,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.base.filebytes import format_bytes
from desktop.chat import ChatSaver, model_context, model_sees, model_thinks
from desktop.machine import doctor_report
from desktop.root.context import AppContext
from desktop.ui.chat.citations import SOURCES_K
from desktop.ui.chat.presets import PresetStore
from desktop.ui.chat.view import ChatView
from desktop.ui.common.error_text import error_text
from desktop.ui.common.fonts import font_warning
from desktop.ui.common.look import apply_theme, icon, resolve_theme
from desktop.ui.common.net_mode import offline_text
from desktop.ui.common.text_fit import ElidedLabel
from desktop.ui.common.workers import TaskWorker, WorkerPool
from desktop.ui.documents.view import DocumentsView
from desktop.ui.models.view import ModelsView
from desktop.ui.server.view import ServerView
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.settings.encryption import SwitchProgress, start_switch
from desktop.ui.settings.key_backup import KeyBackupDialog, key_backup_dialog, offer_key_backup
from desktop.ui.shell.disk_watch import DiskWatch
from desktop.ui.shell.first_run import FirstRunDialog, is_settled
from desktop.ui.shell.tray import Tray, hides_on_close
from desktop.ui.shell.window_place import load_geometry, save_geometry
from desktop.ui.tools.view import ToolsView

if TYPE_CHECKING:
    from desktop.engine import ChatCall, Delta
    from desktop.retrieval import Hit

STATUS_INTERVAL_MS = 2000
PREFERRED_SIZE = QSize(1180, 760)  # the window's size on a screen with room to spare
# What a window manager adds around the window (title bar, borders) and what a screen's
# panels take beyond its available geometry: reserved before the frame is known.
FRAME_ALLOWANCE = QSize(16, 48)


def default_size(available: QSize) -> QSize:
    """The window's first size on a screen whose available area is ``available``: the
    preferred size, shrunk so that the window with its title bar fits (1366×768 too)."""
    return QSize(
        min(PREFERRED_SIZE.width(), available.width() - FRAME_ALLOWANCE.width()),
        min(PREFERRED_SIZE.height(), available.height() - FRAME_ALLOWANCE.height()),
    )


def opening_screen() -> QScreen | None:
    """The screen the window opens on: the one under the mouse pointer, else the primary."""
    return QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()


PAGES = ("chat", "models", "documents", "server", "tools")


class LateScheduler:
    """The context's scheduler, built by the first thread that streams through it.

    Building it probes the hardware and imports llama.cpp (seconds): the window hands
    this to the chat instead, so opening the window never waits for that. Threads:
    ``stream_chat`` runs on a generation worker, so that is where a first build waits.
    """

    def __init__(self, context: AppContext) -> None:
        self._context = context

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """The scheduler's ``stream_chat`` (building the scheduler first if need be)."""
        return self._context.scheduler.stream_chat(model, call, cancel)


class MainWindow(QMainWindow):
    """EdgeDesk's window; closing it stops every worker and releases the models.

    The one module of ``desktop/ui`` that takes the whole ``AppContext``: it is where the
    context is unpacked, each screen getting only what its own Protocol names
    (``ServerScreen``, ``ModelsScreen``, ``DocumentsScreen``, ``ToolServers``…).
    """

    def __init__(self, context: AppContext) -> None:
        super().__init__()
        self.context = context
        self.setWindowTitle("EdgeDesk")
        self.setWindowIcon(icon("app"))
        self._place(opening_screen())
        self.pool = WorkerPool(self)
        # The saver records the window's chat deletions and exports in the audit log.
        saver = ChatSaver(context.chat_store, context.audit)
        self.chat = ChatView(
            LateScheduler(context),
            self.pool,
            saver,
            search=self._search,
            presets=PresetStore(context.paths.config_dir),
            theme=resolve_theme(context.settings.theme),
            reasoning=self.thinks,
            tools=context.toolbox,
            sees=self.sees,
            context_of=self.context_of,
            trained_context=self.trained_context,
            moe_layers=self.moe_layers,
            image_limits=context.image_limits,
            usage=context.record_usage,
        )
        self.models = ModelsView(context, self.pool)
        self.chat.offer_downloads(context, self.models.download)
        self.documents = DocumentsView(context, self.pool, download=self.models.download)
        self.server = ServerView(context, self.pool)
        self.tools = ToolsView(context, self.pool)
        self.disk = self._watch_disk()
        self.stack = QStackedWidget()
        for page in (self.chat, self.models, self.documents, self.server, self.tools):
            self.stack.addWidget(page)
        self.setCentralWidget(self._build_central())
        self._build_status()
        self.models.models_changed.connect(self._offer_models)
        # Said at once (not at the next tick): the first answer waits for its model's load.
        self.chat.composer.send_requested.connect(self.refresh_status)
        self.chat.generation_finished.connect(self._answered)
        self.models.use_in_chat.connect(self.use_in_new_chat)
        self.documents.collections_changed.connect(self._offer_collections)
        self._offer_collections()
        self._offer_models()
        QShortcut(QKeySequence("Ctrl+N"), self, self._new_chat)
        QShortcut(QKeySequence("Ctrl+,"), self, self.open_settings)
        # Ctrl+Q (Cmd+Q on macOS) quits for real, never to the tray: from any screen, the
        # chat's message box included (the window walk found it did nothing).
        QShortcut(QKeySequence("Ctrl+Q"), self, self.request_quit)
        self._closed = False
        self.first_run: FirstRunDialog | None = None  # the welcome, once offered
        self._first_run_waits = False  # offered before the window was on screen
        self.key_backup: KeyBackupDialog | None = None  # the last key backup dialog opened
        # The scheduler (hardware probe, llama.cpp import: seconds) is built off this thread.
        warm_up = TaskWorker(lambda: context.scheduler, "warm-up")
        warm_up.result.connect(self._warmed_up)
        self.pool.start(warm_up)
        # Keep-alive unloads, retention and a rescan of document collections (soon after
        # start, then hourly) run on the app's one housekeeping thread, not the event loop.
        context.housekeeping.start()
        if context.settings.engine.preload:
            self.pool.start(TaskWorker(context.preload))
        self._quitting = False
        self.restart_requested = False  # run_app starts EdgeDesk again once it has quit
        self.restart_box: QMessageBox | None = None  # the last "Restart now?" asked
        self.switch_box: QMessageBox | None = None  # the last "encryption switched" said
        self.quit_box: QMessageBox | None = None  # the last "Quit EdgeDesk?" asked
        self.tray: Tray | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = Tray(self)
            self.tray.show_requested.connect(self._show_from_tray)
            self.tray.quit_requested.connect(self.quit_app)
        if context.settings.server.start_with_app:
            self.server.toggle_server()

    # ------------------------------------------------------------------ layout
    def _place(self, screen: QScreen | None) -> None:
        """Where the user left the window last time (window_place), else the first size
        and place for ``screen``."""
        self._size_for_screen(screen)
        saved = load_geometry(self.context.paths.config_dir)
        if saved is not None:
            self.restoreGeometry(saved)

    def _size_for_screen(self, screen: QScreen | None) -> None:
        """The first size and place: fitted to ``screen`` and centred on it, so a laptop's
        status bar does not start off-screen."""
        if screen is None:
            self.resize(PREFERRED_SIZE)
            return
        area = screen.availableGeometry()
        size = default_size(area.size())
        self.resize(size)
        # The frame is not known before the window manager adds it: centred with room
        # for it (``move`` places the frame's corner), its title bar stays on the screen.
        spare = area.size() - size - FRAME_ALLOWANCE
        self.move(area.x() + max(0, spare.width() // 2), area.y() + max(0, spare.height() // 2))

    def _build_central(self) -> QWidget:
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        # Chinese chosen on a computer without a Chinese font: said above everything, in
        # English (Chinese would be boxes), with what to install.
        self.font_banner = QLabel(font_warning(self.context.settings.language))
        self.font_banner.setObjectName("Banner")
        self.font_banner.setWordWrap(True)
        self.font_banner.setContentsMargins(12, 6, 12, 6)
        self.font_banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.font_banner.setVisible(bool(self.font_banner.text()))
        column.addWidget(self.font_banner)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self._build_nav())
        row.addWidget(self.stack, 1)
        column.addLayout(row, 1)
        return central

    def _watch_disk(self) -> DiskWatch:
        """What the CLI (or another process) changes on disk shows here without a restart."""
        disk = DiskWatch(self.context.paths.data_dir, self.context.paths.database, self)
        disk.models_changed.connect(self.models.refresh)
        disk.keys_changed.connect(self.server.keys_changed_on_disk)
        disk.documents_changed.connect(self.documents.changed_on_disk)
        return disk

    def _build_nav(self) -> QWidget:
        nav = QWidget()
        nav.setObjectName("NavBar")
        column = QVBoxLayout(nav)
        column.setContentsMargins(0, 8, 0, 8)
        self._nav = QButtonGroup(self)
        self.nav_buttons: dict[str, QToolButton] = {}
        for number, (key, label) in enumerate(
            (
                ("chat", self.tr("Chats")),
                ("models", self.tr("Models")),
                ("documents", self.tr("Documents")),
                ("server", self.tr("Server")),
                ("tools", self.tr("Tools")),
            )
        ):
            button = self._nav_button(key, label)
            button.setCheckable(True)
            self._nav.addButton(button, number)
            column.addWidget(button)
        self.nav_buttons["chat"].setChecked(True)
        self._nav.idClicked.connect(self.stack.setCurrentIndex)
        column.addStretch(1)
        settings = self._nav_button("settings", self.tr("Settings"))
        settings.clicked.connect(self.open_settings)
        column.addWidget(settings)
        return nav

    def _nav_button(self, key: str, label: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon("chat" if key == "chat" else key))
        button.setIconSize(QSize(22, 22))
        button.setText(label)
        button.setToolTip(label)
        button.setAccessibleName(label)
        button.setToolButtonStyle(button.toolButtonStyle().ToolButtonTextUnderIcon)
        button.setMinimumWidth(104)  # "Documents" fits unelided
        self.nav_buttons[key] = button
        return button

    def _build_status(self) -> None:
        self._kinds: dict[str, str] = {}  # a loaded model's kind (chat, embedding, …)
        bar = self.statusBar()
        # Elided fields and messages: no status text can widen the window past the screen.
        self.message = ElidedLabel(max_width=10_000)
        bar.addWidget(self.message, 1)
        self.model_status = ElidedLabel(max_width=360)
        self.memory_status = ElidedLabel(max_width=200)
        self.offline_status = ElidedLabel(max_width=160)
        for label in (self.model_status, self.memory_status, self.offline_status):
            bar.addPermanentWidget(label)
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(STATUS_INTERVAL_MS)
        self._status_timer.timeout.connect(self.refresh_status)
        self._status_timer.start()
        shown = [m for m in (self.context.policy_problem, self.context.notice) if m]
        if shown:  # a data move's outcome is said once, here and on stderr
            self.say("  ".join(shown))
        self.refresh_status()

    def _answered(self, _turn: object) -> None:
        self.refresh_status()  # "Loading …" gives way to the model now loaded

    def say(self, message: str) -> None:
        """Show ``message`` in the status bar, elided to its width (whole in the tooltip)."""
        self.message.setText(message)

    def refresh_status(self) -> None:
        """The chat model in memory, the memory EdgeDesk uses, and Offline mode when set.

        Nothing is said about being online: no check of the network is made, so a green
        "Online" would be a guess (wrong on a machine without one). An embedding model
        loaded for documents is not the chat's model and is not named as one.
        """
        # Until the warm-up has built the scheduler, no model can be loaded.
        loaded = self.context.scheduler.loaded() if self.context.scheduler_built else []
        asked = self.chat.current.model if self.chat.current is not None else ""
        chats = [m.model_id for m in loaded if self._is_chat_model(m.model_id)]
        if chats:
            shown = asked if asked in chats else chats[0]
            self.model_status.setText(self.tr("Model: ") + shown)
        elif self.chat.is_generating and asked:  # the first answer waits for the load
            self.model_status.setText(self.tr("Loading %1…").replace("%1", asked))
        elif loaded:  # only a documents' embedding model: not the chat's
            self.model_status.setText(self.tr("No chat model loaded"))
        else:
            self.model_status.setText(self.tr("No model loaded"))
        rss = _memory_in_use()
        self.memory_status.setText(self.tr("Memory: ") + format_bytes(rss, memory=True))
        offline = bool(self.context.settings.offline)
        self.offline_status.setText(self.tr("● Offline mode") if offline else "")
        self.offline_status.setVisible(offline)
        self.offline_status.setStyleSheet("color: #c98a12;")  # the dot in amber
        # Why, and where to undo it: Settings, EDGEDESK_OFFLINE, --offline or the policy.
        self.offline_status.setToolTip(offline_text(self.context.effective) or "")

    def _is_chat_model(self, model_id: str) -> bool:
        """Whether ``model_id`` is a chat model (not an embedding or reranking one); asked
        once per model, from its catalog entry or GGUF header."""
        kind = self._kinds.get(model_id)
        if kind is None:
            entry = self.context.catalog.find(model_id)
            if entry is not None:
                kind = entry.kind
            else:
                try:
                    kind = self.context.resolver(model_id).kind
                except (EdgeDeskError, OSError, ValueError):
                    kind = "chat"  # unknown: named as the model rather than hidden
            self._kinds[model_id] = kind
        return kind == "chat"

    # ------------------------------------------------------------------ actions
    def thinks(self, ref: str) -> bool:
        """Whether model ``ref`` reasons before answering (it has a Think switch).

        A model outside the catalog is read through the resolver; until the warm-up has
        built it, the answer is no, and the header is asked again once it has.
        """
        context = self.context
        if context.catalog.find(ref) is None and not context.resolver_built:
            return False
        return model_thinks(context.catalog, context.resolver, ref)

    def sees(self, ref: str) -> bool:
        """Whether model ``ref`` takes pictures (asked when one is attached or sent)."""
        return model_sees(self.context.resolver, ref)

    def context_of(self, ref: str) -> int | None:
        """Model ``ref``'s context in tokens, once the resolver is built (else None)."""
        if not self.context.resolver_built:
            return None
        return model_context(self.context.resolver, ref)

    def trained_context(self, ref: str) -> int | None:
        """The longest context model ``ref`` was trained for, from its GGUF header (None:
        not known yet, or not a local file)."""
        if not self.context.resolver_built:
            return None
        resolver = self.context.resolver
        try:
            length = resolver.info(resolver.locate(ref)[0]).context_length
        except (EdgeDeskError, OSError, ValueError):
            return None
        return length if length > 0 else None

    def moe_layers(self, ref: str) -> int:
        """The layers of model ``ref`` when it is a mixture of experts (its expert
        placement counts them), else 0; 0 too while not known."""
        if not self.context.resolver_built:
            return 0
        resolver = self.context.resolver
        try:
            info = resolver.info(resolver.locate(ref)[0])
        except (EdgeDeskError, OSError, ValueError):
            return 0
        return info.block_count if info.expert_layers > 0 else 0

    def _warmed_up(self, _key: str, _scheduler: object) -> None:
        if self.chat.current is not None:
            self.chat.header.show_chat(self.chat.current)  # its Think switch, now known
        self.refresh_status()

    def _offer_models(self) -> None:
        self.chat.set_models(self.models.chat_models())

    def _offer_collections(self) -> None:
        self.chat.set_collections(self.documents.names())

    def _search(self, question: str, collections: Sequence[str]) -> list[Hit]:
        # Called on the generation worker's thread (it embeds the question).
        return self.context.searcher.search(question, list(collections), k=SOURCES_K)

    def use_model(self, ref: str) -> None:
        """Switch to the chat screen with ``ref`` as the current chat's model."""
        self._offer_models()
        if self.chat.current is not None:
            self.chat.current.model = ref
            # Only the header changes; re-rendering the transcript here froze the window.
            self.chat.header.show_chat(self.chat.current)
        self.show_page("chat")

    def use_in_new_chat(self, ref: str) -> None:
        """Models → Use in chat: a chat with ``ref``; a new one unless the shown chat is
        still empty (the open conversation keeps the model it was held with)."""
        current = self.chat.current
        if current is not None and current.turns:
            self.chat.new_chat()
        self.use_model(ref)

    def show_page(self, key: str) -> None:
        """Show the ``chat``, ``models``, ``documents``, ``server`` or ``tools`` screen."""
        number = PAGES.index(key)
        self.stack.setCurrentIndex(number)
        self.nav_buttons[key].setChecked(True)

    def maybe_first_run(self) -> FirstRunDialog | None:
        """Offer first-run setup when nothing is installed and there are no chats (once)."""
        data_dir = self.context.paths.data_dir
        if is_settled(data_dir) or self.models.chat_models():
            return None
        if any(chat.store_id is not None or chat.turns for chat in self.chat.chats.chats()):
            return None
        dialog = FirstRunDialog(self.models, data_dir, self.context.hardware, self)
        dialog.ready.connect(self.use_model)
        self.first_run = dialog
        # Opened once the window is on screen: opened before the window manager mapped
        # the window, the welcome could end up under it, never seen (issue 37, item 13).
        if self._exposed():
            self._open_first_run()
        else:
            self._first_run_waits = True
            if self.windowHandle() is not None:
                self.windowHandle().installEventFilter(self)
        return dialog

    def _exposed(self) -> bool:
        handle = self.windowHandle()
        return self.isVisible() and handle is not None and handle.isExposed()

    def _open_first_run(self) -> None:
        self._first_run_waits = False
        dialog = self.first_run
        if dialog is not None and not dialog.isVisible():
            dialog.open()
            dialog.raise_()
            dialog.activateWindow()

    def showEvent(self, event: QShowEvent) -> None:
        """A welcome waiting for the window hears when the window is on screen."""
        super().showEvent(event)
        if self._first_run_waits and self.windowHandle() is not None:
            self.windowHandle().removeEventFilter(self)
            self.windowHandle().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Open a waiting welcome once the window is exposed (mapped and drawn)."""
        if self._first_run_waits and event.type() == QEvent.Type.Expose and self._exposed():
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._open_first_run)  # after this expose is painted
        return super().eventFilter(watched, event)

    def start_dialogs(self) -> FirstRunDialog | None:
        """At start: first-run setup when nothing is installed, then the key backup offer.

        Returns the first-run dialog when it opened (the offer waits for it to close).
        """
        setup = self.maybe_first_run()
        if setup is None:
            self.offer_key_backup()
        else:
            setup.finished.connect(lambda _result: self.offer_key_backup())
        return setup

    def offer_key_backup(self) -> KeyBackupDialog | None:
        """Offer backing up the database key if this key was never offered (once per key)."""
        try:
            self.key_backup = offer_key_backup(self.context.at_rest, self)
        except EdgeDeskError as exc:  # an unreadable key file: the offer waits
            self.say(error_text(exc))
            return None
        return self.key_backup

    def show_key_backup(self, parent: QWidget | None = None) -> KeyBackupDialog:
        """The key backup dialog, asked for in Settings."""
        self.key_backup = key_backup_dialog(self.context.at_rest, parent or self)
        self.key_backup.open()
        return self.key_backup

    def _new_chat(self) -> None:
        self.show_page("chat")
        self.chat.new_chat()

    def open_settings(self) -> SettingsDialog:
        """Show the settings dialog (non-blocking) and apply what is saved."""
        dialog = SettingsDialog(
            self.context.paths,
            self.context.effective,
            self,
            encryption=self.context.at_rest.status(),
        )
        dialog.accepted.connect(lambda: self.apply_settings(dialog))
        if dialog.encryption is not None:
            dialog.encryption.backup_button.clicked.connect(lambda: self.show_key_backup(dialog))
        context = self.context
        report = TaskWorker(lambda: doctor_report(context), "hardware")  # worded there
        report.result.connect(dialog.hardware.show_report)
        report.failed.connect(dialog.hardware.show_failure)
        self.pool.start(report)
        dialog.open()
        return dialog

    def apply_settings(self, dialog: SettingsDialog) -> None:
        """Save the dialog's changes and put them in force where possible without restart."""
        changed = dialog.changes()
        try:
            dialog.location.commit()  # first: a folder that cannot be used stops the save
            self.context.apply_settings(changed)
        except EdgeDeskError as exc:
            QMessageBox.warning(self, self.tr("Settings not saved"), error_text(exc))
            return
        app = QApplication.instance()
        if isinstance(app, QApplication):
            self.chat.set_theme(apply_theme(app, self.context.settings.theme))
        self.refresh_status()
        switch = dialog.encryption
        wanted = None if switch is None else switch.wanted()
        if "language" in changed:
            # Never quit in the middle of an encryption switch: then it waits for a start.
            self.offer_restart(can_now=wanted is None)
        if switch is not None and wanted is not None:
            # The migration copies the whole database: on a worker, behind a progress box.
            self.encryption_switch = start_switch(
                self.context,
                self.pool,
                wanted,
                switch.passphrase.text(),
                self,
                follow=self._follow_switch,
            )

    def offer_restart(self, *, can_now: bool = True) -> QMessageBox | None:
        """Say the new language shows after a restart, and offer to restart now."""
        if not can_now:
            self.say(self.tr("The new language shows the next time EdgeDesk starts."))
            return None
        box = QMessageBox(
            QMessageBox.Icon.Information,
            self.tr("Language"),
            self.tr(
                "The new language shows after EdgeDesk restarts. Restart now? Answers being "
                "written are stopped; your chats are kept."
            ),
            QMessageBox.StandardButton.NoButton,
            self,
        )
        now = box.addButton(self.tr("Restart now"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(self.tr("Later"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(now)
        self.restart_box = box

        def answered(_result: int) -> None:
            if box.clickedButton() is now:
                self.restart_app()
            else:
                self.say(self.tr("The new language shows the next time EdgeDesk starts."))

        box.finished.connect(answered)
        box.open()  # window-modal, without a nested event loop
        return box

    def restart_app(self) -> None:
        """Quit, and have ``run_app`` start EdgeDesk again once this one has shut down."""
        self.restart_requested = True
        self.quit_app()

    def _follow_switch(self, progress: SwitchProgress) -> None:
        # The switch closes and replaces the database file: the disk watch would re-list
        # collections through a closed connection meanwhile, so it waits for the end.
        self.disk.hold()

        def ended(made: bool) -> None:
            self.disk.release()
            if made:  # a new key in the OS keyring: offered for backup once, as it turns on
                self.switch_made()

        progress.finished_with.connect(ended)

    def switch_made(self) -> QMessageBox | None:
        """Say how the data is kept now that an encryption switch is made; a new keyring
        key is offered for backup (that dialog says it is encrypted) instead of a box."""
        status = self.context.at_rest.status()
        if status.get("encrypted"):
            where = (
                self.tr("your passphrase")
                if status.get("key_source") == "passphrase"
                else self.tr("this computer's keyring")
            )
            text = self.tr(
                "Your data is now encrypted; the key is in %1. Chats, documents and "
                "their indexes are unreadable without it."
            ).replace("%1", where)
        else:
            text = self.tr(
                "Your data is no longer encrypted: chats and document indexes are now "
                "plain files. Turn encryption on again in Settings at any time."
            )
        self.say(text)
        if self.offer_key_backup() is not None:
            return None
        box = QMessageBox(
            QMessageBox.Icon.Information,
            self.tr("Encryption"),
            text,
            QMessageBox.StandardButton.Ok,
            self,
        )
        self.switch_box = box
        box.open()
        return box

    # ------------------------------------------------------------------ shutdown
    def shutdown(self) -> None:
        """Stop generation and workers, then release the models (idempotent)."""
        if self._closed:
            return
        self._closed = True
        save_geometry(self.context.paths.config_dir, self.saveGeometry())
        self._status_timer.stop()
        self.disk.stop()  # no re-listing from a database about to close
        self.context.housekeeping.stop()  # a rescan in progress is cancelled
        self.chat.shutdown()
        self.documents.shutdown()
        self.server.shutdown()
        self.pool.stop_all()
        self.context.close()

    def hides_on_close(self) -> bool:
        """Whether closing now hides the window to the tray (the server keeps serving)."""
        # Asked now, not only at start: a tray (a panel, an extension) can go away, and
        # hiding with no icon to come back from would lose the window for good.
        tray = self.tray is not None and self.tray.available()
        return hides_on_close(
            keep_in_tray=bool(self.context.settings.keep_in_tray),
            tray_available=tray,
            server_running=self.server.running,
            quitting=self._quitting,
        )

    def ask_before_quitting(self) -> QMessageBox | None:
        """When quitting stops work in progress, open a box saying what stops (its Quit
        quits); None when nothing would be lost and the window may close at once."""
        stops: list[str] = []
        if self.chat.is_generating:
            stops.append(self.tr("The answer being written stops where it is."))
        if self.server.running:
            stops.append(
                self.tr("The local API server at %1 stops: programs using it lose it.").replace(
                    "%1", self.server.address.text()
                )
            )
        if not stops:
            return None
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Quit EdgeDesk?"),
            self.tr("Quitting EdgeDesk now:") + "\n• " + "\n• ".join(stops),
            QMessageBox.StandardButton.Cancel,
            self,
        )
        if self.server.running and self.tray is not None and self.tray.available():
            box.setInformativeText(
                self.tr(
                    'To keep the server running with the window closed, tick "Closing '
                    'the window keeps the server running in the tray" in Settings.'
                )
            )
        # Alt+Q quits from the keyboard; Enter keeps the work (Cancel is the default).
        quit_button = box.addButton(self.tr("&Quit"), QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self.quit_box = box

        def answered(_result: int) -> None:
            if box.clickedButton() is quit_button:
                self.quit_app()

        box.finished.connect(answered)
        box.open()
        return box

    def request_quit(self) -> None:
        """Quit, not to the tray: at once when nothing would stop, else after the box
        that says what stops (``ask_before_quitting``) is answered Quit."""
        if self.ask_before_quitting() is None:
            self.quit_app()

    def quit_app(self) -> None:
        """Quit for real (tray menu, SIGINT/SIGTERM): close even if the tray would hide."""
        self._quitting = True
        self.close()
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def _show_from_tray(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def bring_to_front(self, path: str = "") -> None:
        """Show the window in front (a later launch asked), and open ``path`` if given:
        a .gguf is imported on the Models screen."""
        self._show_from_tray()
        if not path:
            return
        if path.lower().endswith(".gguf"):
            self.show_page("models")
            self.models.import_later(Path(path))
            return
        self.say(self.tr("EdgeDesk cannot open this file: ") + path)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the window shuts the app down cleanly, or hides it to the tray; with
        an answer being written or the API server running, the user is told what stops
        and asked first."""
        if self.hides_on_close():
            self.hide()
            event.ignore()
            if self.tray is not None:
                self.tray.notify_hidden()
            return
        if not self._quitting and not self._closed and self.ask_before_quitting():
            event.ignore()
            return
        self.shutdown()
        event.accept()
        app = QApplication.instance()
        if isinstance(app, QApplication) and not app.quitOnLastWindowClosed():
            app.quit()  # with a tray, Qt leaves quitting to us


def _memory_in_use() -> int:
    """Resident memory of this process and the ones it started: each loaded model runs in
    a worker process of its own (and MCP tool servers in theirs)."""
    me = psutil.Process()
    total = me.memory_info().rss
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):  # one that just ended
            total += child.memory_info().rss
    return int(total)
