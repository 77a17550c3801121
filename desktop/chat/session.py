"""One chat turn end to end: the question, grounding, streaming, saving, citations.

``ChatCore`` is what the window, ``edgedesk chat`` and ``edgedesk ask`` share. A turn has
two halves. ``ask``/``regenerate``/``begin`` change the Conversation (append the question,
drop what an edit or a regenerate replaces, add the empty answer) and are quick; the
rest blocks (retrieval embeds the question, generation, fsynced writes) and runs on one
worker thread per turn: ``run`` does it all, or a view with its own worker calls
``save_question``, ``prepare`` and ``save_answer`` itself around its own stream.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from desktop.chat.conversation import Conversation, Turn
from desktop.chat.grounding import EmbeddingModelMissing, MissingModel, Search, cite, preparer
from desktop.chat.persistence import ChatSaver
from desktop.engine.types import Chunk, GenerationParams, Message
from desktop.errors import Cancelled, EdgeDeskError, InvalidRequest


def failure_message(exc: BaseException) -> str:
    """What the user is told about an error that broke an answer off (as views show it)."""
    if isinstance(exc, EdgeDeskError):
        return exc.message
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: the program stopped
        return "interrupted"
    return f"unexpected error: {exc}"


class ChatStreamer(Protocol):
    """What a turn needs to generate: the scheduler's ``stream_chat``."""

    def stream_chat(self, model: str, messages: Sequence[Message], params: GenerationParams,
                    cancel: threading.Event | None = None,
                    tools: Sequence[dict[str, Any]] | None = None, *,
                    template_kwargs: Mapping[str, Any] | None = None) -> Any:
        """Stream chunks of an answer (``template_kwargs``: e.g. enable_thinking)."""
        ...


@dataclass
class PendingTurn:
    """An answer about to be generated: the chat, its empty answer turn and the request."""

    chat: Conversation
    answer: Turn
    messages: list[Message]
    params: GenerationParams
    template_kwargs: dict[str, Any] | None
    question_turns: int  # how many turns (up to the question) the store must hold first
    sources: list[Any] = field(default_factory=list)  # filled by ``prepare``

    @property
    def grounded(self) -> bool:
        """Whether the answer is to be grounded in a collection."""
        return bool(self.chat.collection)


class ChatCore:
    """Turns of conversations: ask, regenerate, edit-and-resend, grounded or not, saved.

    Threads: ``ask``, ``regenerate`` and ``begin`` run on the thread that owns the
    Conversation (a window's thread, the terminal's only thread). ``run``,
    ``save_question``, ``prepare``, ``save_answer`` and ``save_broken`` block and run on
    one worker thread per turn; ``run`` alone also writes the answer into its Turn, so a view that
    changes the Turn itself (from streamed signals) uses the three parts instead.
    """

    def __init__(self, streamer: ChatStreamer, saver: ChatSaver | None = None, *,
                 search: Search | None = None,
                 thinks: Callable[[str], bool] | None = None,
                 missing: MissingModel | None = None) -> None:
        self.streamer = streamer
        self.saver = saver  # None: nothing is saved (tests, a view without a store)
        self.search = search  # retrieval for grounded chats; None: grounding unavailable
        self._thinks = thinks or (lambda _ref: False)
        # A grounded chat's collection -> the catalog embedding model it lacks, if any.
        self.missing = missing

    # ------------------------------------------------------------- owner's thread
    def ask(self, chat: Conversation, text: str, *, replace: int | None = None) -> PendingTurn:
        """Add the question (replacing turn ``replace`` and what followed) and its answer."""
        text = text.strip()
        if not text:
            raise InvalidRequest("the message is empty")
        if replace is not None:
            if not 0 <= replace < len(chat.turns) or chat.turns[replace].role != "user":
                raise InvalidRequest(f"there is no message {replace} of yours to edit")
            chat.truncate(replace)
        chat.turns.append(Turn("user", text))
        chat.name_from_first_message()
        return self.begin(chat)

    def regenerate(self, chat: Conversation) -> PendingTurn:
        """Answer the last question again; the previous answer is replaced."""
        if chat.turns and chat.turns[-1].role == "assistant":
            chat.truncate(len(chat.turns) - 1)
        if not chat.turns:
            raise InvalidRequest("there is no question to answer again yet")
        return self.begin(chat)

    def begin(self, chat: Conversation) -> PendingTurn:
        """Add an empty answer to ``chat`` and say how to generate it."""
        if not chat.model:
            raise InvalidRequest("choose a model for this chat first")
        messages = chat.messages()
        question_turns = len(chat.turns)
        answer = Turn("assistant", "")
        chat.turns.append(answer)
        params = GenerationParams(max_tokens=chat.max_tokens, temperature=chat.temperature)
        return PendingTurn(chat, answer, messages, params, self.thinking_kwargs(chat),
                           question_turns)

    def thinking_kwargs(self, chat: Conversation) -> dict[str, Any] | None:
        """Template variables for ``chat``'s next answer: thinking off when switched off."""
        if chat.think or not self._thinks(chat.model):
            return None
        return {"enable_thinking": False}

    # ------------------------------------------------------------- worker thread
    def save_question(self, pending: PendingTurn) -> None:
        """Make the store hold the chat up to the question (worker thread)."""
        if self.saver is not None:
            self.saver.sync(pending.chat, pending.question_turns)

    def prepare(self, pending: PendingTurn) -> tuple[list[Message], object]:
        """Retrieve sources and build the grounded prompt (worker thread; may embed).

        EmbeddingModelMissing (naming the model) when the collection's catalog embedding
        model is not downloaded: a view may offer the download, then answer again.
        """
        if not pending.grounded or self.search is None:
            return pending.messages, []
        needed = self.missing(pending.chat.collection) if self.missing is not None else None
        if needed:
            raise EmbeddingModelMissing(pending.chat.collection, needed)
        return preparer(self.search, pending.chat.collection, pending.messages,
                        pending.sources)()

    def save_answer(self, pending: PendingTurn, final: Chunk, text: str,
                    reasoning: str) -> None:
        """Save the finished (or stopped) answer with its sources (worker thread)."""
        if self.saver is not None:
            self.saver.save_answer(pending.chat, final, text, reasoning, pending.sources)

    def save_broken(self, pending: PendingTurn, text: str, reasoning: str,
                    message: str) -> None:
        """Save the words an answer had when an error broke it off, marked with ``message``.

        Worker thread. Nothing is saved when no word came (the question stays unanswered).
        A store that fails now is not reported over the error that broke the answer.
        """
        if self.saver is None or not (text or reasoning):
            return
        with contextlib.suppress(EdgeDeskError):
            self.saver.save_answer(pending.chat, Chunk(), text, reasoning, pending.sources,
                                   error=message)

    def run(self, pending: PendingTurn, on_chunk: Callable[[Chunk], None] | None = None,
            cancel: threading.Event | None = None) -> Turn:
        """Generate the answer into its Turn, save it, map its citations (blocks).

        ``on_chunk`` sees every streamed chunk (text and reasoning apart). A ``cancel``
        set while waiting or generating keeps what was produced, with the finish reason
        ``cancelled``. An error mid-answer keeps (and saves) the words produced, with the
        finish reason ``error`` and the error's message, then is raised; an error before
        any word leaves the answer out of the chat.
        """
        cancel = cancel or threading.Event()
        turn = pending.answer
        try:
            self.save_question(pending)
            messages, _hits = self.prepare(pending)
            turn.sources = list(pending.sources)
            final = self._stream(pending, messages, on_chunk, cancel)
        except BaseException as exc:
            if turn.content or turn.reasoning:
                turn.finish_reason, turn.error = "error", failure_message(exc)
                self.save_broken(pending, turn.content, turn.reasoning, turn.error)
                cite(turn)
            elif turn in pending.chat.turns:
                pending.chat.turns.remove(turn)
            raise
        turn.usage, turn.tokens_per_s = final.usage, final.tokens_per_s
        turn.placement = final.placement
        turn.finish_reason = final.finish_reason
        self.save_answer(pending, final, turn.content, turn.reasoning)
        cite(turn)
        return turn

    def _stream(self, pending: PendingTurn, messages: list[Message],
                on_chunk: Callable[[Chunk], None] | None, cancel: threading.Event) -> Chunk:
        turn = pending.answer
        final = Chunk(finish_reason="cancelled")
        try:
            stream = self.streamer.stream_chat(pending.chat.model, messages, pending.params,
                                               cancel, template_kwargs=pending.template_kwargs)
            for chunk in stream:
                turn.content += chunk.text
                turn.reasoning += chunk.reasoning
                if on_chunk is not None:
                    on_chunk(chunk)
                if chunk.is_final:
                    final = chunk
        except Cancelled:
            if not cancel.is_set():
                raise
            # Stopped while waiting for the model: an answer that ended before it began.
        return final
