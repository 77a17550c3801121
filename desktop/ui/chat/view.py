"""The Chats screen: conversation list, streaming transcript, composer and per-chat settings."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeyEvent, QShowEvent, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QSplitter, QVBoxLayout, QWidget

from desktop.base.errors import EdgeDeskError
from desktop.chat import (
    DEFAULT_TITLE,
    ChatCore,
    ChatSaver,
    ChatStreamer,
    Conversation,
    PendingTurn,
    Search,
    cite,
    missing_embedding_model,
)
from desktop.engine import DEFAULT_LIMITS, ImageLimits
from desktop.store import UsageRow
from desktop.ui.chat.attach import Attacher
from desktop.ui.chat.composer import Composer
from desktop.ui.chat.header import ChatHeader
from desktop.ui.chat.message import MessageWidget
from desktop.ui.chat.notice import ChatNotice, Download
from desktop.ui.chat.presets import PresetStore
from desktop.ui.chat.sidebar import ChatSidebar
from desktop.ui.chat.stream import StreamingAnswer
from desktop.ui.chat.transcript import Transcript
from desktop.ui.common.error_text import error_text
from desktop.ui.common.net_mode import SettingsInForce, download_refusal
from desktop.ui.common.qmodels import ConversationListModel
from desktop.ui.common.workers import ApprovalRequest, DownloadWorker, GenerationWorker, WorkerPool
from desktop.ui.tools.approval import ToolApproval

if TYPE_CHECKING:
    from desktop.catalog import Catalog
    from desktop.resolve import ModelResolver
    from desktop.retrieval import Library
    from desktop.tools import ToolBox


class EmbeddingModels(SettingsInForce, Protocol):
    """What offering a grounded chat's missing embedding model reads; asked at each
    turn, so a library or resolver rebuilt meanwhile is the one used."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog (the download's size)."""

    @property
    def library(self) -> Library:
        """Document collections (each one's embedding model)."""

    @property
    def resolver(self) -> ModelResolver:
        """Model reference -> load plan (whether the model is here)."""


def _blank(chat: Conversation) -> bool:
    """A chat nothing was said in or set up yet: never saved, the default title, no
    system prompt, not ephemeral (what a new chat would be)."""
    return (
        not chat.turns
        and not chat.system_prompt
        and chat.store_id is None
        and chat.loaded
        and not chat.ephemeral
        and chat.title == DEFAULT_TITLE
    )


class ChatView(QWidget):
    """Chats: start, switch, stream, stop, regenerate, edit-and-resend.

    A view over ``desktop.chat.ChatCore``: the window's thread changes the conversations
    (through the core's ``ask``/``regenerate``); a GenerationWorker's thread runs the
    core's blocking parts (saving, retrieval) around the stream.
    """

    generation_finished = Signal(object)  # the finished answer's Turn, or None on error
    approval_shown = Signal(object)  # the ToolApproval dialog now open (not modal)
    error = Signal(str)

    def __init__(
        self,
        scheduler: ChatStreamer,
        pool: WorkerPool,
        saver: ChatSaver | None = None,
        parent: QWidget | None = None,
        *,
        search: Search | None = None,
        presets: PresetStore | None = None,
        theme: str = "light",
        reasoning: Callable[[str], bool] | None = None,
        tools: ToolBox | None = None,
        sees: Callable[[str], bool] | None = None,
        context_of: Callable[[str], int | None] | None = None,
        trained_context: Callable[[str], int | None] | None = None,
        moe_layers: Callable[[str], int] | None = None,
        image_limits: ImageLimits = DEFAULT_LIMITS,
        usage: Callable[[UsageRow], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self._usage = usage  # each turn's content-free usage row (the Usage tab's "EdgeDesk")
        self._reasoning = reasoning  # whether a model ref thinks first (the Think switch)
        self._trained = trained_context  # a model ref's trained context (the context box)
        self._moe_layers = moe_layers  # a mixture-of-experts model's layers (the experts box)
        self._scheduler = scheduler
        self._pool = pool
        self._saver = saver
        self._search = search  # retrieval for chats grounded in documents
        self._presets = presets
        self.core = ChatCore(
            scheduler,
            saver,
            search=search,
            thinks=reasoning,
            tools=tools,
            sees=sees,
            context_of=context_of,
            image_limits=image_limits,
        )
        self._theme = theme
        self.chats = ConversationListModel()
        self.current: Conversation | None = None
        self._worker: GenerationWorker | None = None
        self.approval: ToolApproval | None = None  # the open question about tool calls
        self._pending: PendingTurn | None = None  # the answer being generated
        self._tool_servers = 0  # the tool servers counted last (the header's Tools switch)
        self._editing: int | None = None
        self._missing: str | None = None  # the model the running answer found missing
        self._build()
        if saver is not None:
            for stored in reversed(saver.load_all()):  # the list shows newest first
                self.chats.add(stored)
            self.chats.renamed.connect(saver.rename)
        listed = self.chats.chats()
        if listed:  # reopened: the chat last used, where the user left off
            self._show(listed[0])
        else:
            self.new_chat()
        self.header.reload_presets()  # again, now that a damaged file can be reported

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.sidebar = ChatSidebar(self.chats, self._saver, lambda: self.current)
        self.sidebar.chosen.connect(self._select_row)
        self.sidebar.new_requested.connect(self.new_chat)
        self.sidebar.delete_requested.connect(self.ask_delete)
        self.sidebar.notice.connect(self._notify)
        self.sidebar.imported.connect(self._show_imported)
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

    def _build_chat(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(4, 0, 0, 0)
        self.header = ChatHeader(
            lambda: self.current,
            self._presets,
            reasoning=self._reasoning,
            trained=self._trained,
            experts=self._moe_layers,
        )
        self.header.ephemeral_toggled.connect(self.chats.refresh)
        self.header.error.connect(self._warn)
        self.header.collection_changed.connect(self._collection_changed)
        self.header.think_changed.connect(self._think_changed)
        self.header.model_changed.connect(self._model_changed)
        self.header.model_changed.connect(self._show_model_state)
        self.header.chat_shown.connect(self._show_model_state)
        self.header.tools_changed.connect(self._parameters_changed)  # kept with them
        self.header.parameters_changed.connect(self._parameters_changed)
        # Shortcuts to the header's parts, for the window, tests and screenshots.
        self.model_box, self.temperature = self.header.model_box, self.header.temperature
        self.ephemeral, self.system_prompt = self.header.ephemeral, self.header.system_prompt
        self.collection_box = self.header.collection_box
        self.tools_switch = self.header.tools_switch
        layout.addWidget(self.header)

        self.transcript = Transcript(self._theme)
        self.transcript.edit_requested.connect(self.edit)
        self.transcript.regenerate_requested.connect(self.regenerate)
        self.transcript.version_requested.connect(self.choose_version)
        self.transcript.unavailable.connect(self._notify)
        layout.addWidget(self.transcript, 1)
        self.stream = StreamingAnswer(self.transcript, lambda: self.current, self)

        self.notes = ChatNotice()
        self.notes.model_arrived.connect(self._on_model_arrived)
        self.notice, self.download_button = self.notes.notice, self.notes.download_button
        layout.addWidget(self.notes)
        self.composer = Composer()
        self.composer.send_requested.connect(self.send)
        self.composer.stop_requested.connect(self.stop)
        self.input = self.composer.input
        self.send_button, self.stop_button = self.composer.send_button, self.composer.stop_button
        layout.addWidget(self.composer)
        # Pictures and documents: Attach, paste into the message box, drop on the chat.
        self.attach = Attacher(
            self.composer.chips,
            self,
            lambda: self.current.model if self.current is not None else "",
            self._notify,
            sees=self._sees,
            pool=self._pool,
            limits=self.core.image_limits,
        )
        self.composer.attach_requested.connect(lambda: self.attach.choose(self))
        # After the header stored the choice: a model that cannot see the pictures says so.
        self.model_box.currentIndexChanged.connect(lambda _i: self.attach.warn_if_blind())
        self.input.pasted.connect(self.attach.on_pasted)
        return panel

    # ------------------------------------------------------------------ models
    def _sees(self, model: str) -> bool:
        """Whether ``model`` takes pictures (the core's judge; yes when there is none)."""
        return self.core.sees is None or self.core.sees(model)

    def set_models(self, models: Sequence[tuple[str, str]]) -> None:
        """Offer ``(label, reference)`` pairs in the model box; keeps the current choice."""
        self.header.set_models(models)

    def _show_model_state(self, _chat: object = None) -> None:
        """Send only with a model to answer; a chat with no message yet says what to
        type, which model answers and whether what is written leaves this device."""
        model = self.current.model if self.current is not None else ""
        self.composer.set_has_model(bool(model))
        self.transcript.set_empty_hint(self._empty_hint(model))

    def _empty_hint(self, model: str) -> str:
        if not model:
            return self.tr(
                "Choose a model above to start (import or download one on the Models "
                "screen), then type your message below. Models on this device answer "
                "here: what you write stays on it."
            )
        label, remote = self.header.model_label(model)
        if remote:
            return (
                self.tr(
                    "Type your message below and press Ctrl+Enter. %1 answers from the "
                    "remote engine %2: what you write leaves this device."
                )
                .replace("%1", model.removeprefix(remote + "/"))
                .replace("%2", remote)
            )
        return self.tr(
            "Type your message below and press Ctrl+Enter. %1 answers on this device: "
            "what you write stays on it."
        ).replace("%1", label)

    def offer_downloads(self, models: EmbeddingModels, download: Download) -> None:
        """Offer a grounded chat's missing catalog embedding model for ``download``.

        Without this, such a chat only says which ``edgedesk models pull`` to run.
        """
        self.notes.offer_downloads(
            models.catalog, download, lambda: download_refusal(models.effective)
        )
        self.core.missing = lambda collection: missing_embedding_model(
            models.library, models.resolver, collection
        )

    def set_collections(self, names: list[str]) -> None:
        """Offer the document collections a chat can be grounded in."""
        self.header.set_collections(names)

    # ------------------------------------------------------------------ chats
    def new_chat(self) -> Conversation:
        """Start an empty chat with the current chat's model and settings, without its
        document collection (or show the empty one already there: pressing New chat twice
        leaves one, not two)."""
        previous = self.current
        empty = next((c for c in self.chats.chats() if _blank(c)), None)
        if empty is not None:
            if previous is not None and previous is not empty and previous.model:
                empty.model = previous.model
            self.notes.withdraw_undo()  # the user moved on, as with a new chat
            self._show(empty)
            self.header.show_model(empty.model)  # it may have been shown already
            self._show_model_state()
            self.input.setFocus()
            return empty
        # The model and sampling carry over; the documents do not: a new chat grounded in
        # the last one's collection, unasked, answered from files the user did not pick.
        chat = Conversation(
            model=previous.model if previous else str(self.model_box.currentData() or "")
        )
        if previous is not None:
            chat.sampling = previous.sampling
        self.chats.add(chat)
        self._show(chat)
        self._show_model_state()
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
        self.notes.withdraw_undo()  # another chat shown: the user has moved on
        self._cancel_edit()
        self.header.show_chat(chat)
        self.refresh_tools()
        self._rebuild_transcript()

    def showEvent(self, event: QShowEvent) -> None:
        """Count the tool servers again: one may have been added on the Tools page."""
        super().showEvent(event)
        self.refresh_tools()

    def refresh_tools(self) -> None:
        """Count the tool servers that may run for the header's Tools switch (reads the
        server list only: no server is started for it)."""
        box = self.core.tools
        if box is None:
            return
        try:
            servers = sum(1 for s in box.states(start=False) if s.refusal is None)
        except EdgeDeskError:
            servers = 0  # a damaged mcp.json: the Tools page says why
        if servers != self._tool_servers:  # added or removed: the last count is stale
            self._tool_servers, self.core.mcp_tools = servers, None
        self.header.set_tools(servers, self.core.mcp_tools if servers else None)

    def _collection_changed(self, chat: object) -> None:
        """Keep the chosen collection with the chat, so a restart shows it again."""
        if self._saver is None or not isinstance(chat, Conversation):
            return
        try:
            self._saver.set_collection(chat)
        except EdgeDeskError as exc:
            self._warn(error_text(exc))

    def _parameters_changed(self, chat: object) -> None:
        """Keep the sampling settings with the chat, so a restart shows them again."""
        if self._saver is None or not isinstance(chat, Conversation):
            return
        try:
            self._saver.set_parameters(chat)
        except EdgeDeskError as exc:
            self._warn(error_text(exc))

    def _model_changed(self, chat: object) -> None:
        """Keep the chosen model with the chat, so a restart continues with it."""
        if self._saver is None or not isinstance(chat, Conversation):
            return
        try:
            self._saver.set_model(chat)
        except EdgeDeskError as exc:
            self._warn(error_text(exc))

    def _think_changed(self, chat: object) -> None:
        """Keep the Think switch with the chat, so reopening it shows the same choice."""
        if self._saver is None or not isinstance(chat, Conversation):
            return
        try:
            self._saver.set_think(chat)
        except EdgeDeskError as exc:
            self._warn(error_text(exc))

    def _show_imported(self, chats: object) -> None:
        added = [c for c in chats if isinstance(c, Conversation)] if isinstance(chats, list) else []
        for chat in reversed(added):  # the list shows newest first
            self.chats.add(chat)
        if added:
            self._show(added[0])

    def ask_delete(self) -> bool:
        """Delete the shown chat after the user confirms (an empty one at once); Undo
        under the transcript brings it back for a few seconds. True if it was deleted."""
        chat = self.current
        if chat is None:
            return False
        if chat.turns or chat.store_id is not None:
            answer = QMessageBox.question(
                self,
                self.tr("Delete chat"),
                self.tr(
                    "Delete “%1” and all its messages? Undo brings it back for a few seconds."
                ).replace("%1", chat.title),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self.delete_current()
        return True

    def delete_current(self) -> None:
        """Delete the shown chat (stopping its answer first) and show another; Undo is
        offered for a few seconds, until the next action."""
        chat = self.current
        if chat is None:
            return
        if self.stream.current and self.stream.current[0] is chat:
            self.stop()
        snapshot = None
        if self._saver is not None:
            try:
                snapshot = self._saver.snapshot(chat)
            except EdgeDeskError:
                snapshot = None  # the deletion goes ahead; only Undo is not offered
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
        if chat.turns and (snapshot is not None or chat.ephemeral or self._saver is None):
            self.notes.offer_undo(
                self.tr("Deleted “%1”.").replace("%1", chat.title),
                lambda: self._undelete(chat, snapshot),
            )

    def _undelete(self, chat: Conversation, snapshot: str | None) -> None:
        """Put back a chat deleted a moment ago and show it."""
        if self._saver is not None:
            try:
                self._saver.restore(chat, snapshot)
            except EdgeDeskError as exc:
                self._warn(error_text(exc))
                return
        self.chats.add(chat)
        self._show(chat)

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

    # ------------------------------------------------------------------ generation
    @property
    def is_generating(self) -> bool:
        """Whether an answer is being generated now."""
        return self._worker is not None

    def send(self) -> None:
        """Send the composer's text (replacing the edited message, if editing)."""
        chat = self.current
        text = self.input.toPlainText().strip()
        attached = self.composer.chips.items()
        if chat is None or not (text or attached) or self.is_generating:
            return
        if self.attach.busy:  # a file being read would be left out
            self._notify(self.tr("Still reading the attached files; send again in a moment."))
            return
        self.notes.withdraw_undo()
        if not chat.model:
            self._notify(
                self.tr("Choose a model for this chat first (Models → Import or download one).")
            )
            return
        # An edited first question re-titles a chat titled from it (not a renamed one).
        retitle = self._editing is not None and chat.titled_by(self._editing)
        title = chat.title
        if retitle:
            chat.title = DEFAULT_TITLE  # the core titles it from the new question
        try:
            pending = self.core.ask(chat, text, replace=self._editing, attachments=attached)
        except EdgeDeskError as exc:  # e.g. a picture for a model that cannot see: kept
            chat.title = title
            self._warn(error_text(exc))
            return
        if retitle and chat.title != title and self._saver is not None:
            self._saver.rename(chat)
        self._cancel_edit()
        self.chats.refresh(chat)
        self.input.clear()
        self.composer.chips.clear()
        self._generate(pending)

    def choose_version(self, index: int, number: int) -> None:
        """Show version ``number`` of answer ``index`` and keep it as the answer: the
        next question's history and the exports use it."""
        chat = self.current
        if chat is None or self.is_generating or not 0 <= index < len(chat.turns):
            return
        try:
            chat.choose_version(index, number)
        except IndexError:
            return
        if self._saver is not None:
            try:
                self._saver.choose_version(chat, index)
            except EdgeDeskError as exc:
                self._warn(error_text(exc))
        self._sync_transcript()  # remakes that bubble (and those after it)

    def regenerate(self) -> None:
        """Answer the last question again; the previous answer stays as a version."""
        chat = self.current
        if chat is None or self.is_generating or not chat.turns:
            return
        try:
            pending = self.core.regenerate(chat)
        except EdgeDeskError as exc:
            self._warn(error_text(exc))
            return
        self._generate(pending)

    def edit(self, index: int) -> None:
        """Load message ``index`` into the composer; sending replaces it and what followed."""
        chat = self.current
        if chat is None or self.is_generating or not 0 <= index < len(chat.turns):
            return
        self._editing = index
        self.input.setPlainText(chat.turns[index].content)
        self.composer.chips.set_items(chat.turns[index].attachments)
        self.input.setFocus()
        self._notify(
            self.tr("Editing a message: send to replace it and everything after it; Esc cancels.")
        )

    def _cancel_edit(self) -> None:
        self._editing = None
        self.notice.setVisible(False)

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
            self.composer.chips.clear()

    def _notify(self, text: str) -> None:
        self.notes.say(text)

    def _warn(self, text: str) -> None:
        self.notes.warn(text)

    def stop(self) -> None:
        """Stop the running answer; what was generated so far is kept."""
        if self._worker is not None:
            self._worker.cancel()

    def _generate(self, pending: PendingTurn) -> None:
        chat, turn = pending.chat, pending.answer
        # The core drives the turn on the worker's thread; its callbacks arrive here as
        # queued signals, and the window's thread fills the Turn from them.
        worker = GenerationWorker(self.core, pending, self._usage)
        worker.prepared.connect(self.stream.on_prepared)
        worker.model_missing.connect(self._on_model_missing)
        worker.delta.connect(self.stream.on_delta)
        worker.reading.connect(self.stream.on_reading)
        worker.finished_chunk.connect(self.stream.on_final)
        worker.tool_step.connect(self.stream.on_tool_step)
        worker.approval_needed.connect(self._approve)
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_done)
        self._worker, self._pending = worker, pending
        self.stream.start(chat, turn)
        self.composer.set_generating(True)
        self.notes.clear()
        self._missing = None
        if chat is self.current:
            self._sync_transcript()  # the question's and the answer's bubbles, no others
        self._pool.start(worker)

    def _approve(self, request: ApprovalRequest) -> None:
        """Ask before a round's MCP tool calls run; the worker waits for the answer.

        Not modal: Stop (the composer's, or the dialog's own) stays within reach."""
        dialog = ToolApproval(request, parent=self)
        dialog.stop_requested.connect(self.stop)
        self.approval = dialog
        dialog.show()
        dialog.raise_()
        self.approval_shown.emit(dialog)

    def _on_model_missing(self, model: str) -> None:
        self._missing = model

    def _on_failed(self, _key: str, message: str) -> None:
        if self.stream.current is not None:
            chat, turn = self.stream.current
            if turn.content or turn.reasoning:  # broken off: kept, and said so under it
                turn.finish_reason, turn.error = "error", message
                cite(turn)
                self.error.emit(message)
                return  # said once, under the answer: not again above the input
            if self._pending is not None and self._pending.answer is turn:
                self.core.unanswered(self._pending)  # a regenerated answer's old version
            else:
                chat.turns.remove(turn)
            if self._missing and self.notes.can_download:
                self.notes.offer(chat, self._missing)
                return
            self._retry_in_composer(chat)
        self._warn(message)
        self.error.emit(message)

    def _retry_in_composer(self, chat: Conversation) -> None:
        """Put the question an error left unanswered back in the empty composer, as an
        edit of it: Send tries again, changed or not, and the chat never holds it twice."""
        last = len(chat.turns) - 1
        if (
            chat is not self.current
            or self._editing is not None
            or self.input.toPlainText().strip()
            or last < 0
            or chat.turns[last].role != "user"
        ):
            return
        self._editing = last
        self.input.setPlainText(chat.turns[last].content)
        self.input.moveCursor(QTextCursor.MoveOperation.End)  # typing adds to it
        self.composer.chips.set_items(chat.turns[last].attachments)

    def download_offered(self) -> DownloadWorker | None:
        """Download the embedding model offered; the question is answered once it is in."""
        return self.notes.download_offered()

    def _on_model_arrived(self, chat: object) -> None:
        current = self.current
        if (
            current is not None
            and chat is current
            and not self.is_generating
            and current.turns
            and current.turns[-1].role == "user"
        ):
            self.regenerate()  # the question that was waiting for the model

    def _on_done(self) -> None:
        final = None
        if self.stream.current is not None:
            turn = self.stream.current[1]
            final = turn if turn.finish_reason not in (None, "error") else None
        self.stream.stop()
        self._worker = self._pending = None
        if self.approval is not None:
            with contextlib.suppress(RuntimeError):  # already closed and deleted
                self.approval.close()  # the answer ended (Stop): nothing left to ask
            self.approval = None
        self.composer.set_generating(False)
        if self.current is not None:
            self.ephemeral.setEnabled(self.current.store_id is None)
        self.refresh_tools()  # the answer may have started the servers: now with a count
        self._sync_transcript()  # drops a failed empty answer; keeps the other bubbles
        self.transcript.refresh_last()  # the last tokens and the footer's statistics
        self.generation_finished.emit(final)

    def shutdown(self) -> None:
        """Stop any answer in progress (window closing)."""
        self.stop()
        self.stream.stop()
