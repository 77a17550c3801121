"""Conversations as every view holds them: turns, per-chat model and sampling.

This is what the window and the terminal chat show and edit; ``ChatSaver``
(persistence.py) mirrors it into the chat store. Ephemeral chats go to the store's
in-memory part and never reach disk. A Conversation belongs to one thread (the one
that shows it); the core's worker only reads it and appends to the store.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, fields, replace
from typing import Any

from desktop.chat._attachments import Attachment, image_of, inline_chars, prompt_text
from desktop.chat._parameters import Sampling
from desktop.engine import Message, Placement, Role, ToolCall, Usage
from desktop.store import Source

DEFAULT_TITLE = "New chat"


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call came to: the text the model was given back, and how it went."""

    call_id: str
    name: str
    server: str
    text: str
    status: str = "ok"  # "ok", "error" (the tool failed) or "denied" (the user said no)

    def to_json(self) -> dict[str, str]:
        """Plain JSON values for the store and exports."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "server": self.server,
            "text": self.text,
            "status": self.status,
        }


@dataclass
class ToolStep:
    """One round of an answer that called tools: the words and reasoning the model wrote
    before its calls, the calls, and their outcomes (in call order)."""

    content: str
    reasoning: str
    calls: tuple[ToolCall, ...]
    results: list[ToolOutcome] = field(default_factory=list)

    def messages(self) -> list[Message]:
        """The round as the template reads it again: the calls, then each result."""
        out = [
            Message(
                "assistant", self.content, tool_calls=self.calls, reasoning=self.reasoning or None
            )
        ]
        out += [Message("tool", r.text, tool_call_id=r.call_id) for r in self.results]
        return out

    def to_json(self) -> dict[str, object]:
        """Plain JSON values for the store and exports."""
        return {
            "content": self.content,
            "reasoning": self.reasoning,
            "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.calls],
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> ToolStep:
        """A stored round (fields a damaged record lacks read as empty)."""
        calls = tuple(
            ToolCall(str(c.get("id", "")), str(c.get("name", "")), str(c.get("arguments", "{}")))
            for c in _objects(data.get("calls", []))
        )
        results = [
            ToolOutcome(
                str(r.get("call_id", "")),
                str(r.get("name", "")),
                str(r.get("server", "")),
                str(r.get("text", "")),
                str(r.get("status", "ok")),
            )
            for r in _objects(data.get("results", []))
        ]
        return cls(str(data.get("content", "")), str(data.get("reasoning", "")), calls, results)


def _objects(items: object) -> list[dict[str, object]]:
    """The JSON objects among a stored list's items (a damaged record's others skipped)."""
    if not isinstance(items, list | tuple):  # a damaged record: no list, so nothing in it
        return []
    return [i for i in items if isinstance(i, dict)]


@dataclass
class Turn:
    """One message as a view shows it, with the answer's statistics."""

    role: Role
    content: str
    reasoning: str = ""
    usage: Usage | None = None
    tokens_per_s: float = 0.0
    finish_reason: str | None = None  # "cancelled": stopped; "error": broken off (see error)
    error: str | None = None  # why an answer broke off mid-way
    placement: Placement | None = None  # where a local model ran this answer (new answers)
    # The numbered sources given to the model: retrieval Hits while the answer is new,
    # store._cited_passages.Source once read back from the store (same path/page/lines/text).
    sources: list[Any] = field(default_factory=list)
    citations: list[Source] = field(default_factory=list)  # the cited sources shown
    # An answer that called tools: its rounds before the final words (``content``).
    tool_steps: list[ToolStep] = field(default_factory=list)
    # A question's pictures and documents, in the order they were attached.
    attachments: list[Attachment] = field(default_factory=list)
    # The model and settings (sampling, system prompt) that made an answer, stamped when
    # it is first saved; None: not saved yet (the chat's current ones made it).
    model: str | None = None
    parameters: dict[str, object] | None = None

    @property
    def images(self) -> list[Attachment]:
        """The pictures among the attachments."""
        return [a for a in self.attachments if a.kind == "image"]

    # An answer regenerated: its other versions (each without versions of its own), in
    # the order they were made, and this one's place among all of them (0-based).
    versions: list[Turn] = field(default_factory=list)
    version: int = 0

    @property
    def version_count(self) -> int:
        """How many versions this answer has (1 when it was never regenerated)."""
        return len(self.versions) + 1

    def all_versions(self) -> list[Turn]:
        """Every version of this answer in order, this one among them (without versions)."""
        bare = replace(self, versions=[], version=0)
        return [*self.versions[: self.version], bare, *self.versions[self.version :]]

    def as_version(self, number: int) -> Turn:
        """Version ``number`` (0-based) of this answer, carrying the others."""
        return pick_version(self.all_versions(), number)


def pick_version(every: list[Turn], number: int) -> Turn:
    """Version ``number`` (0-based) of ``every`` version of an answer, carrying the others."""
    if not 0 <= number < len(every):
        raise IndexError(f"answer version {number + 1} of {len(every)} does not exist")
    return replace(every[number], versions=every[:number] + every[number + 1 :], version=number)


def kept_versions(every: list[Turn]) -> list[Turn]:
    """Of ``every`` version of an answer, those kept when it is regenerated: the ones with
    words, and the ones the user stopped (shown and counted as a version, even before
    their first word: a regeneration adds one, it never silently replaces one)."""
    return [
        v
        for v in every
        if v.content or v.reasoning or v.tool_steps or v.finish_reason == "cancelled"
    ]


def tools_switch(parameters: dict[str, object] | None) -> bool:
    """A stored chat's Tools switch from its parameters: on unless saved as off (chats
    from before the switch existed, and damaged values, keep their tools)."""
    return not (isinstance(parameters, dict) and parameters.get("tools") is False)


def title_for(question: str) -> str:
    """The title a chat gets from its first question ('' for a blank one)."""
    line = " ".join(question.split())
    return line[:40] + ("…" if len(line) > 40 else "") if line else ""


@dataclass
class Conversation:
    """A chat with its own model, system prompt and temperature."""

    model: str = ""
    title: str = DEFAULT_TITLE
    system_prompt: str = ""
    # The sampling settings (the parameters panel), starting at chat.parameters' defaults.
    temperature: float = Sampling.temperature
    max_tokens: int = Sampling.max_tokens
    top_p: float = Sampling.top_p
    top_k: int = Sampling.top_k
    min_p: float = Sampling.min_p
    repeat_penalty: float = Sampling.repeat_penalty
    seed: int | None = Sampling.seed  # None: a random seed for each answer
    context_length: int | None = Sampling.context_length  # None: the model's fitted context
    cpu_moe: str | int | None = Sampling.cpu_moe  # None: engine.cpu_moe (experts' place)
    ephemeral: bool = False
    collection: str = ""  # the document collection that grounds answers ("" for none)
    think: bool = True  # a reasoning model may think first (False: enable_thinking off)
    tools: bool = True  # the MCP tools may be offered to the model (the header's switch)
    turns: list[Turn] = field(default_factory=list)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    store_id: int | None = None  # the store's id once the first message is saved
    synced: int = 0  # how many leading turns the store holds
    rewrite: bool = False  # an edit changed turns the store already holds
    loaded: bool = True  # False until the turns of a stored chat are read

    def answer_settings(self) -> dict[str, object]:
        """What an answer made now is stored with: the sampling and the system prompt."""
        return {**self.sampling.to_dict(), "system_prompt": self.system_prompt}

    def stored_parameters(self) -> dict[str, object]:
        """What the store keeps as the chat's parameters: the sampling and the Tools switch
        (``tools``, read back by ``tools_switch``; ``Sampling.from_dict`` skips it)."""
        return {**self.sampling.to_dict(), "tools": self.tools}

    @property
    def sampling(self) -> Sampling:
        """The chat's sampling settings as one value (its fields are the chat's own)."""
        return Sampling(**{f.name: getattr(self, f.name) for f in fields(Sampling)})

    @sampling.setter
    def sampling(self, value: Sampling) -> None:
        for f in fields(Sampling):
            setattr(self, f.name, getattr(value, f.name))

    def messages(self, inline: int | None = None) -> list[Message]:
        """The conversation as the engine sees it (system prompt first, reasoning dropped).

        A question's pictures go as its images; its documents up to ``inline``
        characters (default: a quarter of a 4k context) are quoted in its text.
        """
        limit = inline_chars(None) if inline is None else inline
        out = [Message("system", self.system_prompt)] if self.system_prompt.strip() else []
        for turn in self.turns:
            for step in turn.tool_steps:  # the calls and results, as the model saw them
                out += step.messages()
            if turn.role == "user" and turn.attachments:
                out.append(
                    Message(
                        "user",
                        prompt_text(turn.content, turn.attachments, limit),
                        images=tuple(image_of(a) for a in turn.images),
                    )
                )
            elif turn.content or turn.role == "user":
                out.append(Message(turn.role, turn.content))
        return out

    def attachments(self) -> list[Attachment]:
        """Every attachment of the chat's questions, oldest first."""
        return [a for t in self.turns if t.role == "user" for a in t.attachments]

    def name_from_first_message(self) -> None:
        """Title the chat from its first question, as people recognise it later."""
        if self.title != DEFAULT_TITLE:
            return
        turn = next((t for t in self.turns if t.role == "user"), None)
        first = (
            "" if turn is None else turn.content or " ".join(a.name for a in turn.attachments)
        )  # a picture sent alone: its file name
        if title_for(first):
            self.title = title_for(first)

    def titled_by(self, index: int) -> bool:
        """Whether turn ``index`` is the first question and the title was made from it (so
        an edit of that question should re-title the chat)."""
        firsts = [n for n, t in enumerate(self.turns) if t.role == "user"]
        return (
            bool(firsts)
            and firsts[0] == index
            and self.title == title_for(self.turns[index].content)
        )

    def choose_version(self, index: int, number: int) -> Turn:
        """Show version ``number`` of answer ``index``: it replaces the turn (a new Turn
        object) and is what the history holds from now on. Returns the chosen turn."""
        if not 0 <= index < len(self.turns):
            raise IndexError(f"there is no turn {index}")
        chosen = self.turns[index].as_version(number)
        self.turns[index] = chosen
        return chosen

    def truncate(self, index: int) -> None:
        """Drop turn ``index`` and everything after it (edit-and-resend, regenerate)."""
        del self.turns[index:]
        if index < self.synced:
            self.rewrite = True
