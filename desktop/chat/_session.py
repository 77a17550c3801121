"""One chat turn end to end: the question, grounding, streaming, saving, citations.

``ChatCore`` is what the window, ``edgedesk chat`` and ``edgedesk ask`` share. A turn has
two halves. ``ask``/``regenerate``/``begin`` change the Conversation (append the question,
drop what an edit or a regenerate replaces, add the empty answer) and are quick; the
rest blocks (retrieval embeds the question, generation, fsynced writes) and runs on one
worker thread per turn: ``drive`` is the one turn driver (it reports through callbacks
and leaves the Turn alone, for a window that fills it from queued signals); ``run``
drives and fills the Turn (the terminal).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from desktop.base.errors import Cancelled, EdgeDeskError, InvalidRequest
from desktop.chat._approval import (
    ApprovalAsk,
    ApprovalBatch,
    Approver,
    BatchApprover,
    Decision,
    call_key,
    one_by_one,
)
from desktop.chat._attachments import Attachment, attached_sources, check_image, inline_chars
from desktop.chat._conversation import (
    Conversation,
    ToolOutcome,
    ToolStep,
    Turn,
    kept_versions,
    pick_version,
)
from desktop.chat._grounding import EmbeddingModelMissing, MissingModel, Search, cite, preparer
from desktop.chat._persistence import ChatSaver
from desktop.engine import (
    DEFAULT_LIMITS,
    ChatCall,
    Delta,
    GenerationParams,
    ImageLimits,
    Message,
    ToolCall,
)
from desktop.tools import BUILTIN, ToolBox, ToolSet, ToolSpec

MAX_TOOL_STEPS = 8  # rounds of tool calls in one answer before it must answer in words


def failure_message(exc: BaseException) -> str:
    """What the user is told about an error that broke an answer off (as views show it)."""
    if isinstance(exc, EdgeDeskError):
        return exc.message
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: the program stopped
        return "interrupted"
    return f"unexpected error: {exc}"


class ChatStreamer(Protocol):
    """What a turn needs to generate: the scheduler's ``stream_chat``."""

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream chunks of an answer: thinking, text and the tool calls it made."""
        ...


@dataclass
class PendingTurn:
    """An answer about to be generated: the chat, its empty answer turn and the request."""

    chat: Conversation
    answer: Turn
    messages: list[Message]
    params: GenerationParams
    template_kwargs: dict[str, object] | None
    question_turns: int  # how many turns (up to the question) the store must hold first
    sources: list[Any] = field(default_factory=list)  # filled by ``prepare``
    inline: int = inline_chars(None)  # a document longer than this is cited, not quoted
    # A regenerated answer: which of ``answer.versions`` was shown before (-1: none).
    replaces: int = -1

    @property
    def grounded(self) -> bool:
        """Whether the answer is to be grounded in a collection."""
        return bool(self.chat.collection)

    @property
    def question(self) -> str:
        """The words of the question being answered (without its attachments)."""
        asked = [t for t in self.chat.turns[: self.question_turns] if t.role == "user"]
        return asked[-1].content if asked else ""


class CannotSee(InvalidRequest):
    """A picture was attached for a model that has no vision projector."""

    def __init__(self, model: str) -> None:
        super().__init__(
            f"{model} cannot see pictures (it has no vision projector); "
            "choose a vision model for this chat, or remove the picture",
            kind="cannot_see",
            params={"model": model},
        )
        self.model = model


class _Words:
    """The words and reasoning of the model's current reply, passed on as they come."""

    def __init__(self, on_chunk: Callable[[Delta], None] | None) -> None:
        self._on_chunk = on_chunk
        self._text: list[str] = []
        self._reasoning: list[str] = []

    def add(self, chunk: Delta) -> None:
        self._text.append(chunk.text)
        self._reasoning.append(chunk.reasoning)
        wanted = chunk.text or chunk.reasoning or chunk.is_final or chunk.read is not None
        if self._on_chunk is not None and wanted:
            self._on_chunk(chunk)

    def clear(self) -> None:
        self._text.clear()
        self._reasoning.clear()

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)


class ChatCore:
    """Turns of conversations: ask, regenerate, edit-and-resend, grounded or not, saved.

    Threads: ``ask``, ``regenerate`` and ``begin`` run on the thread that owns the
    Conversation (a window's thread, the terminal's only thread). ``drive``, ``run``
    and their parts (``save_question``, ``prepare``, ``save_answer``, ``save_broken``)
    block and run on one worker thread per turn; ``run`` alone also writes the answer
    into its Turn, so a view that changes the Turn itself (from queued signals) calls
    ``drive``.
    """

    def __init__(
        self,
        streamer: ChatStreamer,
        saver: ChatSaver | None = None,
        *,
        search: Search | None = None,
        thinks: Callable[[str], bool] | None = None,
        missing: MissingModel | None = None,
        tools: ToolBox | None = None,
        preapproved: Collection[str] = (),
        max_tool_steps: int = MAX_TOOL_STEPS,
        sees: Callable[[str], bool] | None = None,
        context_of: Callable[[str], int | None] | None = None,
        image_limits: ImageLimits = DEFAULT_LIMITS,
    ) -> None:
        self.streamer = streamer
        self.saver = saver  # None: nothing is saved (tests, a view without a store)
        self.search = search  # retrieval for grounded chats; None: grounding unavailable
        self._thinks = thinks or (lambda _ref: False)
        # A grounded chat's collection -> the catalog embedding model it lacks, if any.
        self.missing = missing
        self.tools = tools  # None: the model is offered no tools
        self.preapproved = frozenset(preapproved)  # --yes-tools: run without asking
        self.always: set[str] = set()  # "Always for this tool" answers, this session
        self.max_tool_steps = max_tool_steps
        # How many MCP tools the last answer that asked for them was offered (None: none
        # asked yet); the window's Tools switch shows it. Written by the worker thread.
        self.mcp_tools: int | None = None
        # Whether a model takes pictures (None: not known here; the engine decides).
        self.sees = sees
        # A model's context in tokens (None: not known), which sizes inlined documents.
        self.context_of = context_of
        # Caps on one picture (AppContext.image_limits: settings, forced by policy).
        self.image_limits = image_limits

    # ------------------------------------------------------------- owner's thread
    def ask(
        self,
        chat: Conversation,
        text: str,
        *,
        replace: int | None = None,
        attachments: Sequence[Attachment] | None = None,
    ) -> PendingTurn:
        """Add the question (replacing turn ``replace`` and what followed) and its answer.

        ``attachments`` go with the question (None: an edited question keeps its own).
        The same question again after an error left it unanswered is answered, not added
        a second time.
        CannotSee, before anything changes, when a picture would reach a model without
        vision: it is refused, never silently dropped; ImageRejected when a picture is
        over ``image_limits`` (or is not one).
        """
        text = text.strip()
        if replace is not None:
            if not 0 <= replace < len(chat.turns) or chat.turns[replace].role != "user":
                raise InvalidRequest(f"there is no message {replace} of yours to edit")
            if attachments is None:
                attachments = chat.turns[replace].attachments
        attached = list(attachments or ())
        if not text and not attached:
            raise InvalidRequest("the message is empty")
        earlier = chat.turns[:replace] if replace is not None else chat.turns
        if any(a.kind == "image" for a in attached) or any(t.images for t in earlier):
            self.check_sees(chat.model)
        for item in attached:
            if item.kind == "image":  # the caps in force now, whatever attached it
                check_image(item.data, self.image_limits, name=item.name)
        if replace is not None:
            chat.truncate(replace)
        elif _asked_again(chat, text, attached):
            # The question an error left unanswered, sent again: answered, not asked twice.
            return self.begin(chat)
        chat.turns.append(Turn("user", text, attachments=attached))
        chat.name_from_first_message()
        return self.begin(chat)

    def check_sees(self, model: str) -> None:
        """CannotSee when ``model`` is known to take no pictures."""
        if model and self.sees is not None and not self.sees(model):
            raise CannotSee(model)

    def regenerate(self, chat: Conversation) -> PendingTurn:
        """Answer the last question again; the previous answer (and its versions) stay
        as earlier versions of the new one, which is shown and used from now on."""
        previous: list[Turn] = []
        shown = -1
        if chat.turns and chat.turns[-1].role == "assistant":
            old = chat.turns[-1]
            every = old.all_versions()  # the one shown is a new object: made once
            previous = kept_versions(every)
            shown = next(
                (n for n, v in enumerate(previous) if v is every[old.version]), len(previous) - 1
            )
            # Refused before anything changes: the answer and its versions stay as they are.
            self._check_can_answer(chat)
            chat.truncate(len(chat.turns) - 1)
        if not chat.turns:
            raise InvalidRequest("there is no question to answer again yet")
        pending = self.begin(chat)
        pending.answer.versions, pending.answer.version = previous, len(previous)
        pending.replaces = shown
        return pending

    @staticmethod
    def _restored(pending: PendingTurn) -> Turn | None:
        """The version a regenerated answer was to replace (None for a first answer)."""
        versions = pending.answer.versions
        if versions and 0 <= pending.replaces < len(versions):
            return pick_version(versions, pending.replaces)
        return None

    def unanswered(self, pending: PendingTurn) -> None:
        """The answer ended with nothing to show (an error before its first word): drop
        it, putting back the version it was to replace, if any (owner's thread)."""
        chat, answer = pending.chat, pending.answer
        at = next((n for n, t in enumerate(chat.turns) if t is answer), None)
        if at is None:
            return
        restored = self._restored(pending)
        if restored is not None:
            chat.turns[at] = restored
        else:
            del chat.turns[at]

    def _check_can_answer(self, chat: Conversation) -> None:
        """InvalidRequest / CannotSee when ``chat`` cannot be answered as it stands."""
        if not chat.model:
            raise InvalidRequest("choose a model for this chat first")
        if any(t.images for t in chat.turns):
            self.check_sees(chat.model)  # e.g. the chat's model was changed since

    def begin(self, chat: Conversation) -> PendingTurn:
        """Add an empty answer to ``chat`` and say how to generate it."""
        self._check_can_answer(chat)
        # The context is looked up only for documents (it reads the model's header); the
        # chat's own context length, when set, is the one the model is loaded with.
        documents = any(a.kind == "file" for a in chat.attachments())
        context = chat.context_length or (
            self.context_of(chat.model) if self.context_of is not None and documents else None
        )
        inline = inline_chars(context if documents else None)
        messages = chat.messages(inline)
        question_turns = len(chat.turns)
        answer = Turn("assistant", "", model=chat.model, parameters=chat.answer_settings())
        chat.turns.append(answer)
        params = chat.sampling.generation_params()
        return PendingTurn(
            chat,
            answer,
            messages,
            params,
            self.thinking_kwargs(chat),
            question_turns,
            inline=inline,
        )

    def thinking_kwargs(self, chat: Conversation) -> dict[str, object] | None:
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
        attached = attached_sources(pending.question, pending.chat.attachments(), pending.inline)
        grounded = pending.grounded and self.search is not None
        if not grounded and not attached:
            return pending.messages, []
        if grounded:
            needed = self.missing(pending.chat.collection) if self.missing is not None else None
            if needed:
                raise EmbeddingModelMissing(pending.chat.collection, needed)
        return preparer(
            self.search or (lambda _q, _c: []),
            pending.chat.collection if grounded else "",
            pending.messages,
            pending.sources,
            question=pending.question,
            more=attached,
        )()

    def save_answer(
        self,
        pending: PendingTurn,
        final: Delta,
        text: str,
        reasoning: str,
        steps: Sequence[ToolStep] = (),
    ) -> None:
        """Save the finished (or stopped) answer with its sources and tool rounds (worker
        thread)."""
        if self.saver is not None:
            self.saver.save_answer(
                pending.chat,
                final,
                text,
                reasoning,
                pending.sources,
                steps=steps,
                versions=pending.answer.versions,
                made_by=pending.answer,
            )

    def save_broken(
        self,
        pending: PendingTurn,
        text: str,
        reasoning: str,
        message: str,
        steps: Sequence[ToolStep] = (),
    ) -> None:
        """Save the words an answer had when an error broke it off, marked with ``message``.

        Worker thread. Nothing is saved when no word came (the question stays unanswered).
        A store that fails now is not reported over the error that broke the answer.
        """
        if self.saver is None:
            return
        if not (text or reasoning or steps):
            # A regenerated answer broke off before its first word: the version it was to
            # replace is shown again (``unanswered``), so it is what the store keeps.
            restored = self._restored(pending)
            if restored is not None:
                with contextlib.suppress(EdgeDeskError):
                    self.saver.save_turn(pending.chat, restored)
            return
        with contextlib.suppress(EdgeDeskError):
            self.saver.save_answer(
                pending.chat,
                Delta(),
                text,
                reasoning,
                pending.sources,
                error=message,
                steps=steps,
                versions=pending.answer.versions,
                made_by=pending.answer,
            )

    def drive(
        self,
        pending: PendingTurn,
        on_chunk: Callable[[Delta], None] | None = None,
        cancel: threading.Event | None = None,
        *,
        on_sources: Callable[[list[Any]], None] | None = None,
        approve: Approver | None = None,
        on_step: Callable[[ToolStep], None] | None = None,
        approve_all: BatchApprover | None = None,
    ) -> Delta:
        """Run a turn on the worker thread without touching its Turn; return the final chunk.

        The one turn driver: save the question, prepare (retrieve; ``on_sources`` then gets
        the numbered sources), stream (``on_chunk`` sees every chunk, tool-call markup held
        back), run the tool calls the model makes (``approve_all`` asks once per round
        about every call that needs it, else ``approve`` about each; identical calls of a
        round are asked about and run once, each given the same result; ``on_step`` gets
        each finished round, whose words ``on_chunk`` already showed and which now belong
        to the round) and stream again, up to
        ``max_tool_steps`` rounds; then save the answer. A ``cancel`` set while waiting
        for the model ends the answer before it began (finish reason ``cancelled``, saved
        empty). An error saves the words produced so far marked broken off, then is
        raised. A view that fills the Turn itself (from queued signals) calls this;
        ``run`` fills the Turn here.
        """
        cancel = cancel or threading.Event()
        steps: list[ToolStep] = []
        out = _Words(on_chunk)
        final = Delta(finish_reason="cancelled")
        try:
            # Inside the guard: a regenerated answer's store row is rewritten to the
            # question here, so a failed retrieval must still put the earlier version back.
            self.save_question(pending)
            messages, _hits = self.prepare(pending)
            if on_sources is not None:
                on_sources(list(pending.sources))
            asker = approve_all or (one_by_one(approve) if approve is not None else None)
            offered = self._offered(
                asker is not None,
                grounded=bool(pending.chat.collection),
                mcp=pending.chat.tools,
            )
            while True:
                tools = offered if offered.specs and len(steps) < self.max_tool_steps else None
                out.clear()
                final, calls = self._round(pending, messages, tools, out, cancel)
                if not calls or tools is None or cancel.is_set():
                    break
                step = ToolStep(out.text.strip(), out.reasoning, calls)
                step.results.extend(self._calls(tools, calls, asker, len(steps) + 1, cancel))
                steps.append(step)
                messages = [*messages, *step.messages()]
                if on_step is not None:
                    on_step(step)
                if cancel.is_set():  # stopped while asking or calling: no further round
                    final = replace(final, finish_reason="cancelled")
                    break
        except BaseException as exc:
            self.save_broken(pending, out.text, out.reasoning, failure_message(exc), steps)
            raise
        self.save_answer(pending, final, out.text, out.reasoning, steps)
        return final

    def _round(
        self,
        pending: PendingTurn,
        messages: list[Message],
        tools: ToolSet | None,
        out: _Words,
        cancel: threading.Event,
    ) -> tuple[Delta, tuple[ToolCall, ...]]:
        """Stream one reply of the model; its final chunk and the tool calls it made."""
        final = Delta(finish_reason="cancelled")
        # The engine holds tagged call markup back; an answer that merely opens with "{"
        # streams (stream_bare: a bare call found at the end moves those words into the
        # round, out of sight).
        call = ChatCall(
            tuple(messages),
            pending.params,
            tools.offered() if tools is not None else (),
            pending.template_kwargs,
            stream_bare=True,
            progress=True,  # a long conversation takes minutes to read on a CPU: say so
        )
        calls: tuple[ToolCall, ...] = ()
        try:
            for chunk in self.streamer.stream_chat(pending.chat.model, call, cancel):
                if chunk.is_final:
                    final = chunk
                    calls = chunk.tool_calls if tools is not None else ()
                if calls:  # the turn goes on after the calls: not its end yet
                    out.add(Delta(text=chunk.text, reasoning=chunk.reasoning))
                else:
                    out.add(chunk)
        except Cancelled:
            if not cancel.is_set():
                raise
            # Stopped while waiting for the model: an answer that ended before it began.
        return final, calls

    def _offered(self, can_ask: bool, *, grounded: bool, mcp: bool = True) -> ToolSet:
        """The tools this answer may call: the document tools in a chat grounded in a
        collection; MCP tools when the chat's Tools switch (``mcp``) is on and each call
        can be approved (a view that asks, or tools pre-approved with --yes-tools)."""
        if self.tools is None:
            return ToolSet()
        can_ask = mcp and (can_ask or bool(self.preapproved))
        # A chat on "No documents" gets no document tools: their specs cost ~250 prompt
        # tokens every turn, and a small model given them echoes their JSON as its answer.
        offered = self.tools.available(mcp=can_ask, builtins=grounded)
        if can_ask:
            self.mcp_tools = sum(1 for s in offered.specs.values() if s.server != BUILTIN)
        return offered

    def _calls(
        self,
        tools: ToolSet,
        calls: Sequence[ToolCall],
        asker: BatchApprover | None,
        round_no: int,
        cancel: threading.Event,
    ) -> list[ToolOutcome]:
        """Approve and run one round's calls; their outcomes, in the calls' order.

        Identical calls (same tool, same arguments) are asked about and run once: a model
        that repeats one call 29 times gets 29 times the same answer, and its user one
        question."""
        assert self.tools is not None
        first: dict[tuple[str, str], ToolCall] = {}
        counts: dict[tuple[str, str], int] = {}
        for call in calls:
            first.setdefault(call_key(call), call)
            counts[call_key(call)] = counts.get(call_key(call), 0) + 1
        asks = [
            ApprovalAsk(spec, call, counts[key])
            for key, call in first.items()
            if (spec := tools.specs.get(call.name)) is not None
            and spec.needs_approval
            and not self._preallowed(spec)
        ]
        allowed = self._ask(asks, asker, round_no, cancel)
        done = {
            key: self._call(tools, call, allowed.get(key, True), cancel)
            for key, call in first.items()
        }
        return [replace(done[call_key(call)], call_id=call.id) for call in calls]

    def _ask(
        self,
        asks: list[ApprovalAsk],
        asker: BatchApprover | None,
        round_no: int,
        cancel: threading.Event,
    ) -> dict[tuple[str, str], bool]:
        """Whether each asked call may run (keyed by ``call_key``); remembers "always".
        Nobody to ask (no approver, or stopped) is a no."""
        forced = self.tools is not None and self.tools.require_approval
        decisions: list[Decision] = []
        if asks and asker is not None and not cancel.is_set():
            batch = ApprovalBatch(tuple(asks), round_no, self.max_tool_steps, not forced)
            decisions = list(asker(batch))[: len(asks)]
        decisions += ["deny"] * (len(asks) - len(decisions))  # an answer cut short
        for ask, decision in zip(asks, decisions, strict=True):
            self._remember(ask.spec, decision, forced)
        return {
            call_key(a.call): d in ("once", "always") for a, d in zip(asks, decisions, strict=True)
        }

    def _remember(self, spec: ToolSpec, decision: Decision, forced: bool) -> None:
        if decision == "always" and not forced:
            self.always.add(spec.name)
            if self.tools is not None:
                self.tools.remember(spec)  # kept across restarts

    def _call(
        self, tools: ToolSet, call: ToolCall, allowed: bool, cancel: threading.Event
    ) -> ToolOutcome:
        """Run one call the user allowed (or say why not); its outcome as the model reads it."""
        assert self.tools is not None
        spec = tools.specs.get(call.name)
        if spec is None:
            return ToolOutcome(call.id, call.name, "", f"error: no tool named {call.name}", "error")
        if cancel.is_set():
            return ToolOutcome(
                call.id,
                call.name,
                spec.server,
                "The user stopped the answer before this call ran.",
                "denied",
            )
        if not allowed:
            self.tools.record_denied(spec)
            return ToolOutcome(
                call.id, call.name, spec.server, "The user did not allow this call.", "denied"
            )
        result = self.tools.call(spec, call.arguments, cancel)
        return ToolOutcome(
            call.id, call.name, spec.server, result.text, "error" if result.is_error else "ok"
        )

    def _preallowed(self, spec: ToolSpec) -> bool:
        """Whether a call of ``spec`` runs without asking ("always", --yes-tools)."""
        forced = self.tools is not None and self.tools.require_approval
        return not forced and (
            spec.name in self.always
            or spec.name in self.preapproved
            or (self.tools is not None and self.tools.always_allowed(spec))
        )

    def run(
        self,
        pending: PendingTurn,
        on_chunk: Callable[[Delta], None] | None = None,
        cancel: threading.Event | None = None,
        *,
        approve: Approver | None = None,
        approve_all: BatchApprover | None = None,
    ) -> Turn:
        """Generate the answer into its Turn, save it, map its citations (blocks).

        ``on_chunk`` sees every streamed chunk (text and reasoning apart). A ``cancel``
        set while waiting or generating keeps what was produced, with the finish reason
        ``cancelled``. An error mid-answer keeps (and saves) the words produced, with the
        finish reason ``error`` and the error's message, then is raised; an error before
        any word leaves the answer out of the chat (a regenerated one shows the version
        it was to replace again).
        """
        turn = pending.answer

        def fill(chunk: Delta) -> None:
            turn.content += chunk.text
            turn.reasoning += chunk.reasoning
            if on_chunk is not None:
                on_chunk(chunk)

        def given(sources: list[Any]) -> None:
            turn.sources = sources

        def stepped(step: ToolStep) -> None:
            # The words shown so far were the round's; the answer's own come next.
            turn.tool_steps.append(step)
            turn.content, turn.reasoning = "", ""

        try:
            final = self.drive(
                pending,
                fill,
                cancel,
                on_sources=given,
                approve=approve,
                on_step=stepped,
                approve_all=approve_all,
            )
        except BaseException as exc:
            if turn.content or turn.reasoning:
                turn.finish_reason, turn.error = "error", failure_message(exc)
                cite(turn)
            else:
                self.unanswered(pending)  # a regenerated answer's old version comes back
            raise
        turn.usage, turn.tokens_per_s = final.usage, final.tokens_per_s
        turn.placement = final.placement
        turn.finish_reason = final.finish_reason
        cite(turn)
        return turn


def _asked_again(chat: Conversation, text: str, attached: Sequence[Attachment]) -> bool:
    """Whether ``chat`` ends with this very question, still unanswered."""
    last = chat.turns[-1] if chat.turns else None
    return (
        last is not None
        and last.role == "user"
        and last.content == text
        and list(last.attachments) == list(attached)
    )
