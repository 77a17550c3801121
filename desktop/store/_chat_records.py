"""The records the chat store keeps: a conversation's header, a turn, a search hit.

Plain frozen values, so the chat layer, the CLI and the exports pass them around freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.store._cited_passages import Source


@dataclass(frozen=True)
class Conversation:
    """One conversation's header."""

    id: int
    title: str
    model: str | None
    tags: tuple[str, ...]
    created: float
    updated: float
    ephemeral: bool = False
    collection: str | None = None  # the document collection that grounds its answers
    think: bool = True  # a reasoning model may think first (the window's Think switch)
    # Sampling settings (chat.parameters.Sampling as JSON); None: never set.
    # desktop.chat's JSON; the store keeps it without knowing its fields
    parameters: dict[str, object] | None = None


@dataclass(frozen=True)
class Attachment:
    """A picture or file attached to a question: its bytes as given, and its text.

    ``kind`` is "image" (sent to a vision model as pixels) or "file" (a document whose
    extracted ``text`` the model reads). The bytes are kept in the chat database, so
    they are encrypted with it, expire with the conversation and go with ``chats rm``.
    """

    kind: str  # "image" or "file"
    name: str  # the file name as the user saw it (no folder)
    mime: str
    data: bytes
    sha256: str
    text: str = ""  # a file's extracted text ("" for an image)

    @property
    def size(self) -> int:
        """How many bytes the attachment holds."""
        return len(self.data)


@dataclass(frozen=True)
class ChatMessage:
    """One stored turn with what produced it (model, parameters, tokens, timings)."""

    role: str
    content: str = ""
    reasoning: str | None = None
    model: str | None = None
    # the sampling parameters as desktop.chat wrote them (JSON)
    parameters: dict[str, object] = field(default_factory=dict)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # How it was made: ``tokens_per_s``, and ``placement`` (where a local model ran: its
    # layers, devices, experts in RAM), plain JSON.
    timings: dict[str, object] = field(default_factory=dict)
    created: float | None = None  # None: now
    id: int | None = None  # set when read back
    sources: tuple[Source, ...] = ()  # what a grounded answer was given, and cited
    # How an answer ended ("stop", "length", "cancelled": stopped by the user, "error":
    # broken off) and, when it broke off, why; None when not known (older messages).
    finish_reason: str | None = None
    error: str | None = None
    # An answer that called tools: each round as plain JSON values ({"content",
    # "reasoning", "calls": [{"id", "name", "arguments"}], "results": [{"call_id", "name",
    # "server", "text", "status"}]}); the chat layer reads them into ToolSteps.
    # Any: JSON as read back from the database, damaged rows included
    tool_steps: tuple[dict[str, Any], ...] = ()
    attachments: tuple[Attachment, ...] = ()  # a question's pictures and files, in order
    # A regenerated answer: its other versions as plain JSON values (each a message object
    # as in the JSON export, without versions of its own), in the order they were made,
    # and this one's place among all of them (0-based). This message's own fields are the
    # version the user chose, so the history, the search and the exports use it.
    # Any: version_dict's JSON, read back as stored
    versions: tuple[dict[str, Any], ...] = ()
    version: int = 0

    @property
    def ending(self) -> str | None:
        """A short note on an answer that did not end by itself ("stopped", "broken off")."""
        return ending_note(self.finish_reason, self.error)


@dataclass(frozen=True)
class SearchHit:
    """A message that matched a search, with its conversation."""

    conversation_id: int
    conversation_title: str
    message_id: int
    role: str
    snippet: str


def ending_note(finish_reason: str | None, error: str | None) -> str | None:
    """What a reader is told about an answer that did not end by itself, else None."""
    if finish_reason == "error":
        return f"broken off: {error}" if error else "broken off"
    if finish_reason == "cancelled":
        return "stopped"
    if finish_reason == "length":
        return "hit the token limit"
    return None
