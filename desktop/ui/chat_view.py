"""The Chats screen: conversation list, streaming transcript, composer and per-chat settings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop.chat.conversation import Conversation, Turn
from desktop.chat.grounding import Search, cite, missing_embedding_model
from desktop.chat.persistence import ChatSaver
from desktop.chat.session import ChatCore, PendingTurn
from desktop.engine.types import Chunk
from desktop.errors import EdgeDeskError
from desktop.ui.chat_header import ChatHeader
from desktop.ui.chat_sidebar import ChatSidebar
from desktop.ui.error_text import error_text
from desktop.ui.look import icon
from desktop.ui.message_widget import MessageWidget
from desktop.ui.presets import PresetStore
from desktop.ui.qmodels import ConversationListModel, human_size
from desktop.ui.transcript import Transcript
from desktop.ui.workers import (
    ChatStreamer,
    DownloadWorker,
    GenerationWorker,
    StreamDelta,
    WorkerPool,
)

if TYPE_CHECKING:
    from desktop.app import AppContext

Download = Callable[[str], DownloadWorker | None]  # the Models screen's ``download``

RENDER_INTERVAL_MS = 40  # repaint a streaming answer at most 25 times a second
MAX_RENDER_INTERVAL_MS = 400


class ChatView(QWidget):
    """Chats: start, switch, stream, stop, regenerate, edit-and-resend.

    A view over ``desktop.chat.ChatCore``: the window's thread changes the conversations
    (through the core's ``ask``/``regenerate``); a GenerationWorker's thread runs the
    core's blocking parts (saving, retrieval) around the stream.
    """

    generation_finished = Signal(object)  # the finished answer's Turn, or None on error
    error = Signal(str)

    def __init__(self, scheduler: ChatStreamer, pool: WorkerPool, saver: ChatSaver | None = None,
                 parent: QWidget | None = None, *, search: Search | None = None,
                 presets: PresetStore | None = None, theme: str = "light",
                 reasoning: Callable[[str], bool] | None = None) -> None:
        super().__init__(parent)
        self._reasoning = reasoning  # whether a model ref thinks first (the Think switch)
        self._scheduler = scheduler
        self._pool = pool
        self._saver = saver
        self._search = search  # retrieval for chats grounded in documents
        self._presets = presets
        self.core = ChatCore(scheduler, saver, search=search, thinks=reasoning)
        self._theme = theme
        self.chats = ConversationListModel()
        self.current: Conversation | None = None
        self._worker: GenerationWorker | None = None
        self._streaming: tuple[Conversation, Turn] | None = None
        self._editing: int | None = None
        self._dirty = False
        self._context: AppContext | None = None
        self._download: Download | None = None  # set by ``offer_downloads``
        self._offer: tuple[Conversation, str] | None = None  # a chat, the model it lacks
        self._missing: str | None = None  # the model the running answer found missing
        self._render_timer = QTimer(self)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render_streaming)
        self._build()
        if saver is not None:
            for stored in reversed(saver.load_all()):  # the list shows newest first
                self.chats.add(stored)
            self.chats.renamed.connect(saver.rename)
        self.new_chat()
        self.header.reload_presets()  # again, now that a damaged file can be reported

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.sidebar = ChatSidebar(self.chats, self._saver, lambda: self.current)
        self.sidebar.chosen.connect(self._select_row)
        self.sidebar.new_requested.connect(self.new_chat)
        self.sidebar.delete_requested.connect(self.delete_current)
        self.sidebar.notice.connect(self._notify)
        # Shortcuts to the sidebar's parts, for the window and tests.
        self.new_button, self.search = self.sidebar.new_button, self.sidebar.search
        self.chat_list, self._filter = self.sidebar.chat_list, self.sidebar.filter
        splitter.addWidget(self.sidebar)
        splitter.addWidget(self._build_chat())
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 760])
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        outer.addWidget(splitter)
        # Keys are read from the composer's own events (not window shortcuts) so they work
        # whichever window is active, e.g. with a dialog or a screen reader in front.
        self.input.installEventFilter(self)

    def _build_chat(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(4, 0, 0, 0)
        self.header = ChatHeader(lambda: self.current, self._presets,
                                 reasoning=self._reasoning)
        self.header.ephemeral_toggled.connect(self.chats.refresh)
        self.header.error.connect(self._notify)
        self.header.collection_changed.connect(self._collection_changed)
        self.header.think_changed.connect(self._think_changed)
        # Shortcuts to the header's parts, for the window, tests and screenshots.
        self.model_box, self.temperature = self.header.model_box, self.header.temperature
        self.ephemeral, self.system_prompt = self.header.ephemeral, self.header.system_prompt
        self.collection_box = self.header.collection_box
        layout.addWidget(self.header)

        self.transcript = Transcript(self._theme)
        self.transcript.edit_requested.connect(self.edit)
        self.transcript.regenerate_requested.connect(self.regenerate)
        self.transcript.unavailable.connect(self._notify)
        layout.addWidget(self.transcript, 1)

        self.notice = QLabel()
        self.notice.setObjectName("Muted")
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.PlainText)  # may quote names from user data
        self.notice.setVisible(False)
        notice_row = QHBoxLayout()
        notice_row.addWidget(self.notice, 1)
        self.download_button = QPushButton(icon("import"), self.tr("Download"))
        self.download_button.setAccessibleName(self.tr("Download the embedding model"))
        self.download_button.clicked.connect(self.download_offered)
        self.download_button.setVisible(False)
        notice_row.addWidget(self.download_button)
        layout.addLayout(notice_row)
        layout.addLayout(self._build_composer())
        return panel

    def _build_composer(self) -> QHBoxLayout:
        composer = QHBoxLayout()
        self.input = QPlainTextEdit()
        self.input.setObjectName("Composer")
        self.input.setPlaceholderText(self.tr("Message the model — Ctrl+Enter to send"))
        self.input.setAccessibleName(self.tr("Message"))
        self.input.setFixedHeight(84)
        actions = QVBoxLayout()
        self.send_button = QPushButton(icon("send"), self.tr("Send"))
        self.send_button.setObjectName("Primary")
        self.send_button.setAccessibleName(self.tr("Send message"))
        self.send_button.setToolTip(self.tr("Send (Ctrl+Enter)"))
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton(icon("stop"), self.tr("Stop"))
        self.stop_button.setAccessibleName(self.tr("Stop generating"))
        self.stop_button.setToolTip(self.tr("Stop (Esc)"))
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        actions.addWidget(self.send_button)
        actions.addWidget(self.stop_button)
        composer.addWidget(self.input, 1)
        composer.addLayout(actions)
        return composer

    # ------------------------------------------------------------------ models
    def set_models(self, models: list[tuple[str, str]]) -> None:
        """Offer ``(label, reference)`` pairs in the model box; keeps the current choice."""
        self.header.set_models(models)

    def offer_downloads(self, context: AppContext, download: Download) -> None:
        """Offer a grounded chat's missing catalog embedding model for ``download``.

        Without this, such a chat only says which ``edgedesk models pull`` to run.
        """
        self._context, self._download = context, download
        self.core.missing = lambda collection: missing_embedding_model(
            context.library, context.resolver, collection)

    def set_collections(self, names: list[str]) -> None:
        """Offer the document collections a chat can be grounded in."""
        self.header.set_collections(names)

    # ------------------------------------------------------------------ chats
    def new_chat(self) -> Conversation:
        """Start an empty chat with the current chat's model and settings."""
        previous = self.current
        chat = Conversation(
            model=previous.model if previous else str(self.model_box.currentData() or ""),
            temperature=previous.temperature if previous else 0.7,
            collection=previous.collection if previous else "",
        )
        self.chats.add(chat)
        self._show(chat)
        self.input.setFocus()
        return chat

    def _show(self, chat: Conversation) -> None:
        # Highlighting the row selects the chat (through ``_select_row``); select here
        # only when it did not, e.g. when the search hides the row.
        self.sidebar.show_chat(chat)
        if self.current is not chat:
            self.select(chat)

    def _select_row(self, chat: object) -> None:
        if isinstance(chat, Conversation) and chat is not self.current:
            self.select(chat)

    def select(self, chat: Conversation) -> None:
        """Show ``chat`` (a generation in another chat keeps running)."""
        self.current = chat
        if self._saver is not None:
            self._saver.load_turns(chat)
        self._cancel_edit()
        self.header.show_chat(chat)
        self._rebuild_transcript()

    def _collection_changed(self, chat: object) -> None:
        """Keep the chosen collection with the chat, so a restart shows it again."""
        if self._saver is None or not isinstance(chat, Conversation):
            return
        try:
            self._saver.set_collection(chat)
        except EdgeDeskError as exc:
            self._notify(error_text(exc))

    def _think_changed(self, chat: object) -> None:
        """Keep the Think switch with the chat, so reopening it shows the same choice."""
        if self._saver is None or not isinstance(chat, Conversation):
            return
        try:
            self._saver.set_think(chat)
        except EdgeDeskError as exc:
            self._notify(error_text(exc))

    def delete_current(self) -> None:
        """Delete the shown chat (stopping its answer first) and show another."""
        chat = self.current
        if chat is None:
            return
        if self._streaming and self._streaming[0] is chat:
            self.stop()
        if self._saver is not None:
            self._saver.delete(chat)
        self.current = None
        # Removing the row moves the list's highlight to a neighbour; show only the chat
        # chosen below, not that neighbour first (each showing renders a transcript).
        with QSignalBlocker(self.sidebar):
            self.chats.remove(chat)
        remaining = self.chats.chats()
        if remaining:
            self._show(remaining[0])
        else:
            self.new_chat()

    # ------------------------------------------------------------------ transcript
    @property
    def theme(self) -> str:
        """``light`` or ``dark``: the palette answers' code is coloured in."""
        return self._theme

    @property
    def _bubbles(self) -> list[MessageWidget]:
        return self.transcript.bubbles

    def _rebuild_transcript(self) -> None:
        """Make every bubble afresh (another chat, or another theme)."""
        turns = self.current.turns if self.current is not None else []
        self.transcript.rebuild(turns, generating=self.is_generating)

    def _sync_transcript(self) -> None:
        """Bring the bubbles in line with the current chat's turns, making only new ones."""
        turns = self.current.turns if self.current is not None else []
        self.transcript.sync(turns, generating=self.is_generating)

    def set_theme(self, theme: str) -> None:
        """Colour the transcript's code for the ``light`` or ``dark`` theme from now on."""
        if theme != self._theme:
            self._theme = self.transcript.theme = theme
            self._rebuild_transcript()

    def _render_streaming(self) -> None:
        if not self._dirty or self._streaming is None:
            return
        self._dirty = False
        chat, _turn = self._streaming
        if chat is self.current and self._bubbles:
            started = time.perf_counter()
            self.transcript.refresh_last()
            self.transcript.scroll_to_end()
            # Laying out a long Markdown answer gets slower as it grows; spend at most
            # about a tenth of the time rendering so the window stays responsive.
            cost_ms = (time.perf_counter() - started) * 1000
            self._render_timer.setInterval(
                int(min(MAX_RENDER_INTERVAL_MS, max(RENDER_INTERVAL_MS, cost_ms * 10))))

    # ------------------------------------------------------------------ generation
    @property
    def is_generating(self) -> bool:
        """Whether an answer is being generated now."""
        return self._worker is not None

    def send(self) -> None:
        """Send the composer's text (replacing the edited message, if editing)."""
        chat = self.current
        text = self.input.toPlainText().strip()
        if chat is None or not text or self.is_generating:
            return
        if not chat.model:
            self._notify(self.tr("Choose a model for this chat first (Models → Import or "
                                 "download one)."))
            return
        try:
            pending = self.core.ask(chat, text, replace=self._editing)
        except EdgeDeskError as exc:
            self._notify(error_text(exc))
            return
        self._cancel_edit()
        self.chats.refresh(chat)
        self.input.clear()
        self._generate(pending)

    def regenerate(self) -> None:
        """Answer the last question again (the previous answer is replaced)."""
        chat = self.current
        if chat is None or self.is_generating or not chat.turns:
            return
        try:
            pending = self.core.regenerate(chat)
        except EdgeDeskError as exc:
            self._notify(error_text(exc))
            return
        self._generate(pending)

    def edit(self, index: int) -> None:
        """Load message ``index`` into the composer; sending replaces it and what followed."""
        chat = self.current
        if chat is None or self.is_generating or not 0 <= index < len(chat.turns):
            return
        self._editing = index
        self.input.setPlainText(chat.turns[index].content)
        self.input.setFocus()
        self._notify(self.tr("Editing a message: send to replace it and everything after it; "
                             "Esc cancels."))

    def _cancel_edit(self) -> None:
        self._editing = None
        self.notice.setVisible(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+Enter in the composer sends."""
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
            if ctrl and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.send()
                return True
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc (here or in any child that does not use it) stops, or cancels an edit."""
        if event.key() == Qt.Key.Key_Escape:
            self._escape()
            event.accept()
            return
        super().keyPressEvent(event)

    def _escape(self) -> None:
        if self.is_generating:
            self.stop()
        elif self._editing is not None:
            self._cancel_edit()
            self.input.clear()

    def _notify(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.setVisible(True)

    def stop(self) -> None:
        """Stop the running answer; what was generated so far is kept."""
        if self._worker is not None:
            self._worker.cancel()

    def _generate(self, pending: PendingTurn) -> None:
        chat, turn, core = pending.chat, pending.answer, self.core
        # The worker streams into signals (the window's thread fills the Turn); the core's
        # blocking parts run on the worker's thread around that stream.
        worker = GenerationWorker(
            self._scheduler, chat.model, pending.messages, pending.params,
            before=None if self._saver is None else lambda: core.save_question(pending),
            after=None if self._saver is None else lambda final, text, reasoning:
                core.save_answer(pending, final, text, reasoning),
            prepare=(lambda: core.prepare(pending))
            if pending.grounded and self._search is not None else None,
            template_kwargs=pending.template_kwargs,
            broken=None if self._saver is None else lambda text, reasoning, message:
                core.save_broken(pending, text, reasoning, message),
        )
        worker.prepared.connect(self._on_prepared)
        worker.model_missing.connect(self._on_model_missing)
        worker.delta.connect(self._on_delta)
        worker.finished_chunk.connect(self._on_final)
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_done)
        self._worker = worker
        self._streaming = (chat, turn)
        self.send_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.notice.setVisible(False)
        self.download_button.setVisible(False)
        self._offer = self._missing = None
        if chat is self.current:
            self._sync_transcript()  # the question's and the answer's bubbles, no others
        self._render_timer.start(RENDER_INTERVAL_MS)
        self._pool.start(worker)

    def _on_prepared(self, sources: object) -> None:
        if self._streaming is not None and isinstance(sources, list):
            self._streaming[1].sources = sources

    def _on_delta(self, delta: StreamDelta) -> None:
        if self._streaming is None:
            return
        turn = self._streaming[1]
        turn.content += delta.text
        turn.reasoning += delta.reasoning
        self._dirty = True

    def _on_final(self, chunk: Chunk) -> None:
        if self._streaming is None:
            return
        turn = self._streaming[1]
        turn.usage = chunk.usage
        turn.tokens_per_s = chunk.tokens_per_s
        turn.finish_reason = chunk.finish_reason
        cite(turn)  # [n] in the answer -> the files, pages and lines they point to

    def _on_model_missing(self, model: str) -> None:
        self._missing = model

    def _on_failed(self, _key: str, message: str) -> None:
        if self._streaming is not None:
            chat, turn = self._streaming
            if turn.content or turn.reasoning:  # broken off: kept, and said so under it
                turn.finish_reason, turn.error = "error", message
                cite(turn)
            else:
                chat.turns.remove(turn)
            if self._missing and self._download is not None:
                self._offer_download(chat, self._missing)
                return
        self._notify(message)
        self.error.emit(message)

    # ------------------------------------------------------------------ model downloads
    def _offer_download(self, chat: Conversation, model: str) -> None:
        """Say which embedding model the chat's collection lacks and offer Download."""
        self._offer = (chat, model)
        entry = self._context.catalog.find(model) if self._context is not None else None
        size = entry.quant().size if entry is not None else None
        self._notify(self.tr("The collection %1 needs the embedding model %2, which is not "
                             "downloaded yet%3. Download it, then the answer follows.")
                     .replace("%1", chat.collection).replace("%2", model)
                     .replace("%3", f" ({human_size(size)})" if size else ""))
        self.download_button.setVisible(True)
        self.download_button.setEnabled(True)

    def download_offered(self) -> DownloadWorker | None:
        """Download the embedding model offered; the question is answered once it is in."""
        if self._offer is None or self._download is None:
            return None
        model = self._offer[1]
        worker = self._download(model)
        if worker is None:
            return None  # offline, blocked…: the Models screen said why
        self.download_button.setEnabled(False)
        self._notify(self.tr("Downloading %1…").replace("%1", model))
        worker.installed.connect(self._on_model_downloaded)
        worker.paused.connect(self._on_model_download_stopped)
        worker.failed.connect(self._on_model_download_failed)
        return worker

    def _on_model_downloaded(self, ref: str, _model: object) -> None:
        offer = self._offer
        if offer is None or offer[1] != ref:
            return
        self._offer = None
        self.download_button.setVisible(False)
        self.notice.setVisible(False)
        chat = offer[0]
        if chat is self.current and not self.is_generating and chat.turns \
                and chat.turns[-1].role == "user":
            self.regenerate()  # the question that was waiting for the model

    def _on_model_download_stopped(self, ref: str) -> None:
        if self._offer is not None and self._offer[1] == ref:
            self.download_button.setEnabled(True)
            self._notify(self.tr("The download of %1 is paused; Download resumes it.")
                         .replace("%1", ref))

    def _on_model_download_failed(self, ref: str, message: str) -> None:
        if self._offer is not None and self._offer[1] == ref:
            self.download_button.setEnabled(True)
            self._notify(f"{ref}: {message}")

    def _on_done(self) -> None:
        final = None
        if self._streaming is not None:
            turn = self._streaming[1]
            final = turn if turn.finish_reason not in (None, "error") else None
        self._render_timer.stop()
        self._worker = None
        self._streaming = None
        self._dirty = False
        self.send_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        if self.current is not None:
            self.ephemeral.setEnabled(self.current.store_id is None)
        self._sync_transcript()  # drops a failed empty answer; keeps the other bubbles
        self.transcript.refresh_last()  # the last tokens and the footer's statistics
        self.generation_finished.emit(final)

    def shutdown(self) -> None:
        """Stop any answer in progress (window closing)."""
        self.stop()
        self._render_timer.stop()
