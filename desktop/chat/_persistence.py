"""Mirror conversations (the window's, the terminal's) into the chat store.

Saving runs on the thread that generates the answer (the store is thread-safe and every
write is fsynced, which must not stall a window): the question before the answer is
generated, the answer (or the part produced before Stop) once it ends. Reading a stored
chat's turns happens when it is first shown.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from desktop.base.audit import Auditor, NoAudit
from desktop.base.errors import EdgeDeskError
from desktop.chat._conversation import Conversation, ToolStep, Turn, tools_switch
from desktop.chat._grounding import cite, stored_sources
from desktop.chat._parameters import Sampling
from desktop.engine import Delta, Placement, Role, Usage
from desktop.store import ChatMessage, ChatStore, version_dict, version_message


def _to_message(turn: Turn, chat: Conversation) -> ChatMessage:
    # Each answer records the model and settings that made it (the sampling, the system
    # prompt): the chat's current ones when it is first saved, its own ever after, so a
    # rewrite (regenerate, edit) or another version chosen never restamps older answers.
    params: dict[str, object] = {}
    model = None
    if turn.role == "assistant":
        params = turn.parameters if turn.parameters is not None else chat.answer_settings()
        model = turn.model if turn.model is not None else chat.model
    usage = turn.usage
    timings: dict[str, object] = {"tokens_per_s": turn.tokens_per_s} if turn.tokens_per_s else {}
    if turn.placement is not None:  # so a reopened answer says where it ran, as when new
        timings["placement"] = msgspec.to_builtins(turn.placement)
    return ChatMessage(
        role=turn.role,
        content=turn.content,
        reasoning=turn.reasoning or None,
        model=model,
        parameters=params,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        timings=timings,
        sources=stored_sources(turn) if turn.role == "assistant" else (),
        finish_reason=turn.finish_reason,
        error=turn.error,
        tool_steps=tuple(step.to_json() for step in turn.tool_steps),
        attachments=tuple(turn.attachments),
        versions=tuple(version_dict(_to_message(v, chat)) for v in turn.versions),
        version=turn.version if turn.versions else 0,
    )


MAX_DEVICES = 16  # a stored placement naming more GPUs than this is damaged


def _placement_of(value: object) -> Placement | None:
    """The stored placement back; None for an answer saved without one, or a damaged one
    (an imported export is untrusted JSON)."""
    if value is None:
        return None
    try:
        placed = msgspec.convert(value, Placement)
    except msgspec.ValidationError:
        return None
    counts = (placed.layers_total, placed.layers_offloaded, placed.experts_in_ram)
    # An export crafted with 100,000 devices would be one line of megabytes under an answer.
    if min(counts) < 0 or len(placed.devices) > MAX_DEVICES:
        return None
    return placed


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _to_turn(message: ChatMessage) -> Turn:
    usage = None
    if message.completion_tokens is not None:
        usage = Usage(message.prompt_tokens or 0, message.completion_tokens)
    role: Role = "assistant" if message.role == "assistant" else "user"
    turn = Turn(
        role,
        message.content,
        message.reasoning or "",
        usage,
        _number(message.timings.get("tokens_per_s")),
        message.finish_reason,
        message.error,
        sources=list(message.sources),
        tool_steps=[ToolStep.from_json(s) for s in message.tool_steps],
        attachments=list(message.attachments),
        model=message.model if role == "assistant" else None,
        parameters=dict(message.parameters) if role == "assistant" else None,
        placement=_placement_of(message.timings.get("placement")),
    )
    versions = [version_message(v) for v in message.versions]
    turn.versions = [_to_turn(v) for v in versions if v is not None]
    turn.version = min(message.version, len(turn.versions))
    cite(turn)  # the same [n] buttons as when the answer was new: same text, same sources
    return turn


@dataclass
class ChatSaver:
    """Loads stored chats and saves a view's chats as they change.

    ``load_all``, ``load_turns``, ``choose_version``, ``set_collection``, ``set_model``,
    ``set_parameters``, ``set_think``, ``rename``, ``snapshot``, ``delete`` and ``restore``
    are called by the thread that owns the conversations; ``sync``, ``save_answer``,
    ``save_turn`` and ``keep`` by the thread generating that chat's answer (one at a time
    per chat).
    """

    store: ChatStore
    # Exports and deletions made through this saver are recorded here (content-free).
    audit: Auditor = field(default_factory=NoAudit)

    def load_all(self) -> list[Conversation]:
        """Every stored chat, most recently active first (turns read later)."""
        chats: list[Conversation] = []
        for c in self.store.list_conversations():
            chat = Conversation(
                model=c.model or "",
                title=c.title or "New chat",
                ephemeral=c.ephemeral,
                collection=c.collection or "",
                think=c.think,
                store_id=c.id,
                loaded=False,
            )
            chat.sampling = Sampling.from_dict(c.parameters)  # invalid values: defaults
            chat.tools = tools_switch(c.parameters)
            chats.append(chat)
        return chats

    def load_turns(self, chat: Conversation) -> None:
        """Read a stored chat's turns and its last system prompt and temperature."""
        if chat.loaded or chat.store_id is None:
            return
        messages = self.store.get_messages(chat.store_id)
        chat.turns = [_to_turn(m) for m in messages if m.role in {"user", "assistant"}]
        chat.synced = len(chat.turns)
        answers = [m for m in messages if m.role == "assistant" and m.parameters]
        if answers:
            if self.store.get_conversation(chat.store_id).parameters is None:
                # A chat from before the parameters were kept with it: its last answer's.
                chat.sampling = Sampling.from_dict(answers[-1].parameters, chat.sampling)
            chat.system_prompt = str(answers[-1].parameters.get("system_prompt", ""))
        chat.loaded = True

    def sync(self, chat: Conversation, upto: int) -> None:
        """Make the store hold exactly ``chat.turns[:upto]`` (worker thread)."""
        if chat.rewrite and chat.store_id is not None:
            # The store appends only; an edited history is saved as a fresh copy.
            self.store.delete(chat.store_id)
            chat.store_id, chat.synced = None, 0
        chat.rewrite = False
        if chat.store_id is None:
            created = self.store.create_conversation(
                chat.title,
                chat.model or None,
                ephemeral=chat.ephemeral,
                collection=chat.collection or None,
                think=chat.think,
                parameters=chat.stored_parameters(),
            )
            chat.store_id = created.id
        for turn in chat.turns[chat.synced : upto]:
            self.store.add_message(chat.store_id, _to_message(turn, chat))
        chat.synced = max(chat.synced, upto)

    def save_answer(
        self,
        chat: Conversation,
        final: Delta,
        text: str,
        reasoning: str,
        sources: Sequence[Any] = (),
        *,
        error: str | None = None,
        steps: Sequence[ToolStep] = (),
        versions: Sequence[Turn] = (),
        made_by: Turn | None = None,
    ) -> None:
        """Save the finished, stopped or (with ``error``) broken-off answer, with the
        sources it was given, the tool rounds it made, for a regenerated answer its
        earlier ``versions``, and the model and settings ``made_by`` was begun with
        (worker thread)."""
        if chat.store_id is None:
            return
        turn = Turn(
            "assistant",
            text,
            reasoning,
            final.usage,
            final.tokens_per_s,
            "error" if error is not None else final.finish_reason,
            error,
            sources=list(sources),
            tool_steps=list(steps),
            versions=list(versions),
            version=len(versions),
            model=made_by.model if made_by is not None else None,
            parameters=made_by.parameters if made_by is not None else None,
            placement=final.placement,
        )
        self.store.add_message(chat.store_id, _to_message(turn, chat))
        chat.synced += 1

    def save_turn(self, chat: Conversation, turn: Turn) -> None:
        """Append ``turn`` as the chat's next stored message (worker thread)."""
        if chat.store_id is None:
            return
        self.store.add_message(chat.store_id, _to_message(turn, chat))
        chat.synced += 1

    def keep(self, chat: Conversation) -> None:
        """Save an ephemeral chat to disk after all (its in-memory copy is dropped)."""
        if not chat.ephemeral:
            self.sync(chat, len(chat.turns))
            return
        if chat.store_id is not None:
            with contextlib.suppress(EdgeDeskError):
                self.store.delete(chat.store_id)
        chat.ephemeral, chat.store_id, chat.synced, chat.rewrite = False, None, 0, False
        self.sync(chat, len(chat.turns))

    def choose_version(self, chat: Conversation, index: int) -> None:
        """Store the version turn ``index`` shows now as the answer (owner's thread)."""
        if chat.store_id is None or index >= chat.synced:
            return  # not saved yet: it is saved as it is when it is
        said = [
            m for m in self.store.get_messages(chat.store_id) if m.role in {"user", "assistant"}
        ]
        message_id = said[index].id if index < len(said) else None
        if message_id is not None:
            self.store.replace_message(
                chat.store_id, message_id, _to_message(chat.turns[index], chat)
            )

    def set_collection(self, chat: Conversation) -> None:
        """Store the chat's collection (a chat not saved yet gets it when it is created)."""
        if chat.store_id is not None:
            self.store.set_collection(chat.store_id, chat.collection or None)

    def set_parameters(self, chat: Conversation) -> None:
        """Store the chat's sampling settings and its Tools switch (a chat not saved yet
        gets them when it is created)."""
        if chat.store_id is not None:
            self.store.set_parameters(chat.store_id, chat.stored_parameters())

    def set_model(self, chat: Conversation) -> None:
        """Store the model chosen for the chat's next turns (a chat not saved yet gets it
        when it is created)."""
        if chat.store_id is not None:
            self.store.set_model(chat.store_id, chat.model or None)

    def set_think(self, chat: Conversation) -> None:
        """Store the chat's Think switch (a chat not saved yet gets it when it is created)."""
        if chat.store_id is not None:
            self.store.set_think(chat.store_id, chat.think)

    def rename(self, chat: Conversation) -> None:
        """Store a new title."""
        if chat.store_id is not None:
            self.store.rename(chat.store_id, chat.title)

    def snapshot(self, chat: Conversation) -> str | None:
        """A copy of a saved chat to undo its deletion with, taken just before it (kept in
        memory only; None for a chat with nothing on disk)."""
        if chat.store_id is None or chat.ephemeral:
            return None
        return self.store.export_json([chat.store_id])

    def restore(self, chat: Conversation, snapshot: str | None) -> None:
        """Bring back a chat deleted a moment ago: a saved one from its ``snapshot``
        (every message with its time, versions and sources), an ephemeral one from memory
        (back into memory, never onto the disk)."""
        if snapshot is not None:
            [header] = self.store.import_json(snapshot)
            chat.store_id, chat.rewrite, chat.loaded = header.id, False, True
            chat.synced = sum(
                m.role in {"user", "assistant"} for m in self.store.get_messages(header.id)
            )
            self.audit.record("chats.restored", conversations=1, ids=[header.id], source="window")
        elif chat.turns:
            chat.store_id, chat.synced, chat.rewrite = None, 0, False
            self.sync(chat, len(chat.turns))

    def delete(self, chat: Conversation) -> None:
        """Delete a chat and its messages from the store (scrubbed from the file)."""
        if chat.store_id is not None:
            with contextlib.suppress(EdgeDeskError):  # already gone: nothing to delete
                self.store.delete(chat.store_id)
            if not chat.ephemeral:  # an ephemeral chat never reached the disk
                # The event `edgedesk chats rm` records: how many, which ids, no title.
                self.audit.record(
                    "chats.deleted", conversations=1, ids=[chat.store_id], source="window"
                )
            chat.store_id = None
