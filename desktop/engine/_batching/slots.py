"""Slots: one KV-cache sequence each, the tokens it holds, and which slot a request gets.

A slot keeps the tokens of its last request after it finishes, so the next request
that starts the same way (the next turn of a chat, an IDE request on the same file)
decodes only its new suffix. Pure bookkeeping: nothing here touches llama.cpp.

A slot's phase is its ``state`` (``SlotState``), changed only by ``Slot.move``, which
refuses a transition the decode loop never makes (as llama.cpp's server names its
``slot_state``): IDLE -> PROMPT (admitted) -> GENERATING (first token sampled) -> IDLE
(finished, cancelled, out of time or room); PROMPT -> IDLE when the request ends
before its first token. The loop changes a slot only through its methods (``admit``,
``read_prompt``, ``sampled_next``, ``release``, ``emptied``...), each of which keeps the
fields that belong together in step: what its sequence holds, what its request still
has to decode, and its checkpoint.
"""

from __future__ import annotations

import queue
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from desktop.engine._types import FinishReason, TokenLogprob

# A slot's kept tokens are worth keeping unless a request reuses at least this share of
# them; below it an empty or least recently used slot is taken instead, so one chat does
# not evict another only because both start with the same template header.
MIN_REUSE_SHARE = 0.5
# ...or at least this many tokens: longer than any template header, so it is a shared
# system prompt and tools (an agent's next turn after a long answer, another client of
# the same agent); the conversation it cuts is kept in the RAM state cache.
MIN_REUSE_TOKENS = 256


class SlotState(Enum):
    """Where a slot is in serving a request."""

    IDLE = "idle"  # no request; it may keep the tokens of its last one
    PROMPT = "prompt"  # a request's prompt is being decoded, a prefill piece per step
    GENERATING = "generating"  # a token is sampled and decoded each step


# Every transition the decode loop makes; anything else is a bug in the loop.
TRANSITIONS: dict[SlotState, frozenset[SlotState]] = {
    SlotState.IDLE: frozenset({SlotState.PROMPT}),
    SlotState.PROMPT: frozenset({SlotState.GENERATING, SlotState.IDLE}),
    SlotState.GENERATING: frozenset({SlotState.IDLE}),
}


class SlotStateError(RuntimeError):
    """A slot was asked to make a transition the decode loop never makes."""


@dataclass(frozen=True)
class Token:
    """A sampled token on its way from the decode loop to the request's thread."""

    id: int
    logprob: TokenLogprob | None = None


@dataclass(frozen=True)
class Reading:
    """How far the decode loop has read a request's prompt (requests that asked for it):
    ``done`` of its ``total`` tokens, those reused from a cache counted as read."""

    done: int
    total: int


@dataclass(frozen=True)
class Finished:
    """The decode loop is done with a request (no more tokens will come)."""

    reason: FinishReason
    prompt_tokens: int
    cached_tokens: int
    sampled: int
    error: Exception | None = None


@dataclass(eq=False)
class Request:
    """One generation request, shared between its own thread and the decode loop.

    The request thread creates it and reads ``events``; the decode loop fills ``events``
    and reads the rest. ``abandon`` is the request thread's way to say "stop now".
    """

    tokens: list[int]
    sampler: Any  # SamplerChain; typed loosely so this module stays free of llama_cpp
    max_tokens: int
    deadline: float
    cancel: threading.Event
    logprobs: int | None = None
    cached: int = 0  # prompt tokens reused from the slot's kept prefix (set at admission)
    # Images by the index of their placeholder run in ``tokens`` (vision.ImageTokens:
    # negative ids stand for an image's positions; typed loosely, as ``sampler``).
    media: dict[int, Any] = field(default_factory=dict)
    # KV cells its images take beyond their positions (M-RoPE images: n_tokens - n_pos).
    extra_cells: int = 0
    # Prompt and answer as int32 bytes, for prompt-lookup drafting (decode loop only).
    history: bytearray = field(default_factory=bytearray)
    # Reading events while the prompt is read, one a piece of a few seconds (a window shows
    # how far a long prompt got; on a CPU a 9B model reads ~15 tokens a second).
    progress: bool = False
    events: queue.SimpleQueue[Token | Reading | Finished] = field(default_factory=queue.SimpleQueue)
    abandoned: threading.Event = field(default_factory=threading.Event)


@dataclass(eq=False)
class Slot:
    """One sequence of the shared KV cache; touched only by the decode loop thread."""

    seq: int
    tokens: list[int] = field(default_factory=list)  # what the KV cache holds, in order
    last_used: int = 0  # decode step of its last admission, for least-recently-used
    request: Request | None = None
    pending: list[int] = field(default_factory=list)  # prompt tokens not yet decoded
    next_token: int | None = None  # sampled, to be decoded next step
    sampled: int = 0
    cached: int = 0
    output_index: int = -1  # batch row whose logits this slot samples from this step
    draft: list[int] = field(default_factory=list)  # guessed tokens decoded after next_token
    draft_window: int = 0  # most tokens its next lookup draft may guess (next_draft_window)
    state: SlotState = SlotState.IDLE
    extra_cells: int = 0  # cells its images hold beyond their positions (M-RoPE)
    prompt_end: int = 0  # prompt tokens of its last request: where its answer began
    # A SWA-sized cache's context checkpoint: its sliding-window layers' state (a ctypes
    # byte array, typed loosely as ``Request.sampler``) as of ``checkpoint_at`` tokens,
    # the end of its last long prompt; what the slot needs to be cut back there.
    checkpoint: Any = None
    checkpoint_at: int = 0

    @property
    def busy(self) -> bool:
        """Whether a request holds this slot."""
        return self.state is not SlotState.IDLE

    def admit(self, request: Request, keep: int, *, draft_window: int, step: int) -> None:
        """Start serving ``request``, whose first ``keep`` tokens the sequence holds already
        (cut back to them by the caller): the rest are its prompt still to decode."""
        self.move(SlotState.PROMPT)
        prompt = request.tokens
        if keep < self.checkpoint_at:
            self.checkpoint = None  # it holds tokens this request does not share
        self.tokens = list(prompt[:keep])
        self.pending = list(prompt[keep:])
        self.prompt_end = len(prompt)
        self.extra_cells = request.extra_cells
        self.request = request
        self.next_token = None
        self.sampled = 0
        self.cached = request.cached = keep
        self.draft = []
        self.draft_window = draft_window
        self.last_used = step

    def read_prompt(self, count: int) -> None:
        """The next ``count`` pending prompt tokens (text, or one image's positions) were
        decoded into the sequence."""
        self.tokens.extend(self.pending[:count])
        del self.pending[:count]

    def next_decoded(self, draft: list[int]) -> None:
        """Its sampled next token, and the guesses ``draft`` after it, went into this step's
        batch; the token is held from now on, the guesses only once they are sampled."""
        assert self.next_token is not None  # sampled last step
        self.tokens.append(self.next_token)
        self.next_token = None
        self.draft = draft

    def take_draft(self) -> list[int]:
        """This step's guesses, to be checked against the samples (the slot keeps none)."""
        draft, self.draft = self.draft, []
        return draft

    def guess_taken(self, token: int) -> None:
        """A guess decoded this step was sampled: its cell is the answer's now."""
        self.tokens.append(token)

    def draft_checked(self, drafted: int, accepted: int, most: int) -> None:
        """``accepted`` of its ``drafted`` guesses were taken: size its next draft
        (``next_draft_window``, at most ``most``)."""
        self.draft_window = next_draft_window(self.draft_window, drafted, accepted, most)

    def sampled_next(self, token: int) -> None:
        """``token`` was sampled, to be decoded at the next step; the first one ends the
        prompt."""
        self.next_token = token
        if self.state is SlotState.PROMPT:
            self.move(SlotState.GENERATING)

    def release(self) -> None:
        """The request is done: the slot keeps what its sequence holds for the next one
        (a prompt cut short holds only what was decoded of it)."""
        self.move(SlotState.IDLE)
        self.pending = []
        self.request = None
        self.next_token = None
        self.draft = []

    def emptied(self, holding: Sequence[int] = ()) -> None:
        """Its sequence was emptied (and then filled with ``holding``, a saved conversation
        restored into it): its image cells are gone, and its checkpoint no longer fits."""
        self.tokens = list(holding)
        self.extra_cells = 0
        self.checkpoint = None

    def cut_back(self, end: int) -> None:
        """Its sequence was cut back to its first ``end`` tokens."""
        self.tokens = self.tokens[:end]

    def keep_checkpoint(self, state: Any) -> None:
        """``state`` is its sliding-window layers' state as of now (None: it has none)."""
        self.checkpoint = state
        if state is not None:
            self.checkpoint_at = len(self.tokens)

    def move(self, to: SlotState) -> None:
        """Enter state ``to``; raise SlotStateError for a transition not in TRANSITIONS."""
        if to not in TRANSITIONS[self.state]:
            raise SlotStateError(
                f"slot {self.seq}: {self.state.value} -> {to.value} "
                "is not a transition of the decode loop"
            )
        self.state = to


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


LOOKUP_NGRAM = 3  # tokens that must match before a lookup draft is proposed
LOOKUP_NGRAM_MAX = 12  # longest match tried first: it finds the right copy in repetitive text
_TOKEN = struct.Struct("<i")


def lookup_draft(
    history: bytes | bytearray,
    n_max: int,
    ngram: int = LOOKUP_NGRAM,
    ngram_max: int = LOOKUP_NGRAM_MAX,
) -> list[int]:
    """Prompt-lookup drafting: up to ``n_max`` tokens that followed the latest earlier
    occurrence of the longest tail of ``history`` (int32 bytes) that occurred before,
    from ``ngram_max`` tokens down to ``ngram``; [] if none.

    What an agent asks for (a file rewritten with small changes, a quoted tool result)
    mostly repeats its prompt, so these guesses are often right. The longest match
    matters in repetitive text (code): the last three tokens (``return x *``) occur in
    every function, and their latest occurrence is usually the wrong one.
    """
    width = _TOKEN.size
    size = len(history)
    if n_max <= 0 or size // width - 1 < ngram:
        return []
    # Every longer tail ends with the shortest one: when that occurs nowhere earlier (the
    # usual case outside copying), one scan of the history answers, not one per length.
    if _rfind_token_aligned(history, bytes(history[size - ngram * width :]), size - width) < 0:
        return []
    for n in range(min(ngram_max, size // width - 1), ngram - 1, -1):
        pos = _rfind_token_aligned(history, bytes(history[size - n * width :]), size - width)
        if pos >= 0:
            start = pos + n * width
            follow = bytes(history[start : min(size, start + n_max * width)])
            return [value for (value,) in _TOKEN.iter_unpack(follow)]
    return []


def next_draft_window(window: int, drafted: int, accepted: int, most: int) -> int:
    """The next draft's size limit after ``accepted`` of ``drafted`` guesses were taken.

    Doubles after a draft taken whole (the answer is copying: long drafts amortize the
    decode), falls to what was taken after a miss (at least 1). On a CPU a guessed row
    costs most of a decode step until the batch is large (docs/benchmarks.md, "Code
    rewrite with prompt lookup"), so short doomed drafts are what loses speed.
    """
    if drafted <= 0:
        return window
    if accepted >= drafted:
        return min(most, max(1, window) * 2)
    return max(1, accepted)


def _rfind_token_aligned(history: bytes | bytearray, tail: bytes, end: int) -> int:
    """The last token-aligned offset of ``tail`` in ``history[:end]``; -1 if none."""
    width = _TOKEN.size
    while True:
        pos = history.rfind(tail, 0, end)
        if pos < 0 or pos % width == 0:
            return pos
        end = pos + len(tail) - 1  # misaligned: look further back


def choose_slot(slots: Sequence[Slot], prompt: Sequence[int]) -> tuple[Slot, int] | None:
    """The idle slot for ``prompt`` and how many of its tokens it reuses; None if all busy.

    Longest reused prefix wins when it is worth it (see MIN_REUSE_SHARE); otherwise, and
    on ties, the empty or least recently used slot.
    """
    best: tuple[int, int, int] | None = None  # (useful reuse, -last_used, index)
    choice: tuple[Slot, int] | None = None
    for index, slot in enumerate(slots):
        if slot.busy:
            continue
        reuse = common_prefix(slot.tokens, prompt)
        worth = reuse >= MIN_REUSE_SHARE * len(slot.tokens) or reuse >= MIN_REUSE_TOKENS
        useful = reuse if slot.tokens and worth else 0
        key = (useful, -slot.last_used if slot.tokens else 1, -index)
        if best is None or key > best:
            best, choice = key, (slot, reuse)
    return choice
