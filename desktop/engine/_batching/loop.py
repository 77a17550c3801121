"""The continuous-batching step loop: every generating slot plus one prefill piece per decode.

Each step decodes one token for every slot that is generating and then fills the rest
of the batch (up to ``n_batch`` tokens) with pending prompt tokens, so a long prompt
delays running streams by at most one prefill piece per token. New requests join at the next
step; finished, cancelled and abandoned ones leave at the start of a step.

The slots share one KV cache of ``n_ctx`` cells (unified): one request may use all of
it. A request is admitted only when its prompt fits beside the running ones (idle
slots' kept prefixes are copied to RAM and dropped to make room, and before any request
is read, or a sliding-window model's long one: COLD_PROMPT_TOKENS); otherwise it waits
for them to finish. When generating slots fill the cache, the one holding the most
cells ends with ``length``. So a full cache defers or shortens, never hangs or fails.

A new request whose prompt starts as another slot's conversation does (a chat template's
header, an IDE's or agent's system prompt) shares that slot's cells for the common start
instead of reading it again (``_borrow``): in one unified cache a cell can belong to
several sequences, so sharing costs neither compute nor memory. An idle lender then
moves to the RAM cache like any idle conversation; the cells it lent stay with the
borrower. Cells are counted once per slot holding them, so the
room the loop sees is never more than llama.cpp has.
"""

from __future__ import annotations

import logging
import struct
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.base.errors import EdgeDeskError
from desktop.engine._batching.checkpoints import SlotWindows
from desktop.engine._batching.sampling import token_logprob
from desktop.engine._batching.slots import (
    Finished,
    Reading,
    Request,
    Slot,
    SlotState,
    Token,
    choose_slot,
    common_prefix,
    lookup_draft,
)
from desktop.engine._batching.statecache import MIN_SAVED_TOKENS, StateCache
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._native import BatchWorker
from desktop.engine._types import EngineStats, FinishReason


@dataclass(frozen=True)
class Step:
    """What one decode carried, for tests and the benchmark to see the batching."""

    index: int
    generation_tokens: int  # one per generating slot
    prompt_tokens: int  # pending prompt tokens decoded in this step (at most one prefill piece)
    draft_tokens: int = 0  # prompt-lookup guesses decoded after the generating slots' tokens


StepObserver = Callable[[Step], None]


@dataclass
class Counters:
    """What the decode loop counted since load; changed and read under the loop's lock."""

    processed: int = 0  # prompt tokens decoded
    cached: int = 0  # prompt tokens reused from a slot or a saved conversation
    tokens: int = 0  # tokens decoded, every kind (prompt, answer, guesses, image positions)
    drafted: int = 0  # prompt-lookup guesses decoded
    accepted: int = 0  # of which the sampler took


_TOKEN = struct.Struct("<i")
# A request's first lookup draft guesses at most this many tokens; each draft taken
# whole doubles the next one's limit, up to ``draft_max`` (slots.next_draft_window).
LOOKUP_FIRST_WINDOW = 8
# Guessed tokens in one decode, all slots together: each needs its own logits row, and
# llama.cpp keeps an output buffer as large as the most rows one decode asked for
# (n_vocab floats each: 1 MiB per row for Gemma 3's 262,144 tokens).
LOOKUP_ROWS_PER_STEP = 64
# A decode that reads prompt text carries at most one guess per this many of its prompt
# tokens (none beside a short prompt): that prompt's request waits for the decode, and a
# guessed row costs as much as several prompt tokens (measured in docs/benchmarks.md,
# "Guesses beside a prompt"), so the decode grows a little, never several times.
PROMPT_TOKENS_PER_GUESS = 64
# Before a request is read, the other idle slots' conversations move out of the KV cache
# into the RAM cache, as llama-server's defaults do (--cache-idle-slots): in a unified
# cache each decode's attention spans every cell up to the highest in use, whichever
# sequence holds it, so an 8k-token prompt read beside one idle 8k conversation took 5%
# longer (docs/benchmarks.md, issue 36), and a lone stream on the Moonlight shape decoded
# 63.3 against 61.1 ms a token beside three kept chats (issue 47). A follow-up copies
# its conversation back (milliseconds). A sliding-window model (``sized`` windows) keeps
# them in place unless the prompt has at least this many tokens to read: most of its
# layers attend to their window only, and its copy is as of the prompt's end, so a
# follow-up would read the last answer again.
COLD_PROMPT_TOKENS = 1024
# Each step reads about this many seconds of prompt, at the speed the last pieces were
# read, within [PROGRESS_MIN_PIECE, the batch]: a step ends, and every stream beside the
# reader gets its next token, a cancel or a gone client takes effect, and a window's
# chat hears how far it got, every few seconds. On a CPU a 9B model reads ~15 tokens a
# second: a 2,048-token batch was two minutes in which no other stream moved and a
# client that left still held its slot. Pieces cost nothing there: 64-token pieces read
# at 14.9 tokens/s against 15.1 for 512 on the GLM-4-9B shape, 30.3 against 31.3 on the
# Moonlight shape (32-token pieces: 9% slower, hence the floor). A fast reader (a GPU,
# a small model) keeps the whole batch. A reader not timed yet starts with the floor,
# which times it: any step that read a block of prompt or more is timed.
PROGRESS_STEP_S = 3.0
PROGRESS_MIN_PIECE = 64
# A step's rows (its streams' tokens, their guesses, the prompt pieces) are cut to a
# multiple of this many: llama.cpp's CPU kernels multiply rows in blocks, and the rows
# past the last block are another pass over the weights. On the GLM-4-9B shape a 64-row
# decode took 4.02 s, 65 rows 4.25 s, 66-68 rows 4.5-4.65 s: a 64-token piece beside a
# stream read 7% slower than the whole prompt at once until the piece made room for the
# stream's token.
ROW_BLOCK = 32
log = logging.getLogger("edgedesk.engine")


def progress_piece(tokens_per_s: float | None, limit: int) -> int:
    """Prompt tokens one step reads at ``tokens_per_s`` (None: not timed yet), at most
    ``limit``: about PROGRESS_STEP_S seconds' worth, a multiple of 32."""
    floor = min(PROGRESS_MIN_PIECE, limit)
    if tokens_per_s is None:
        return floor
    worth = int(tokens_per_s * PROGRESS_STEP_S) // 32 * 32
    return max(floor, min(limit, worth))


class DecodeLoop(BatchWorker):
    """Owns the llama context's generation: one thread runs ``_run``; others ``submit``.

    ``submit``, ``stats``, ``reusable_prefix`` and ``stop`` may be called from any
    thread. Everything else, including every llama.cpp call on the context, happens on
    the loop's own thread.
    """

    def __init__(
        self,
        ctx: llama_cpp.llama_context_p,
        vocab: llama_cpp.llama_vocab_p,
        *,
        n_vocab: int,
        n_batch: int,
        n_slots: int,
        n_ctx: int,
        n_swa: int,
        piece: Callable[[int], str],
        swa_full: bool = True,
        state_cache_bytes: int = 0,
        state_disk: Path | None = None,
        state_disk_bytes: int = 0,
        state_disk_key: bytes | None = None,
        draft_max: int = 0,
        on_step: StepObserver | None = None,
        shared_cells: bool = False,
    ) -> None:
        super().__init__(n_batch, "edgedesk-decode", self._run)
        # One stream of cells for every slot (a unified KV cache): a slot may then share
        # another's cells for a common prompt start (``_borrow``); separate streams
        # would need a copy of the data, which llama.cpp only makes whole.
        self._shared_cells = shared_cells
        self._ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._vocab = vocab
        self._n_vocab = n_vocab
        self._n_batch = n_batch
        self._n_ubatch = int(llama_cpp.llama_n_ubatch(ctx))
        self._n_ctx = n_ctx
        self._draft_max = draft_max  # prompt-lookup tokens guessed per step; 0: off
        self._windows = SlotWindows(ctx, n_swa, swa_full)
        self._piece = piece
        self._on_step = on_step
        self._slots = [Slot(seq) for seq in range(n_slots)]
        self._states = StateCache(
            ctx,
            state_cache_bytes,
            state_disk,
            state_disk_bytes,
            n_swa=n_swa,
            disk_key=state_disk_key,
        )
        self._forget_asked = False  # set by ``forget``: drop saved conversations at the next step
        # Slots generating when a deletion came: their cells hold what may be deleted, so
        # they are emptied when their request ends instead of kept for reuse.
        self._tainted: set[int] = set()
        self._pending: deque[Request] = deque()
        self._failure: EdgeDeskError | None = None
        self._steps = 0
        self._counts = Counters()
        self._read_rate: float | None = None  # prompt tokens a second, recent steps
        self._start_worker()

    # ------------------------------------------------------------- any thread
    def submit(self, request: Request) -> None:
        """Queue ``request``; it joins a slot at the next step where one is free."""
        with self._lock:
            if self._failure is not None:
                raise self._failure
            if self._stopping:
                raise EdgeDeskError("the model was unloaded; send the request again")
            self._pending.append(request)
            self._lock.notify()

    def stats(self) -> EngineStats:
        """Counters since load (a consistent snapshot)."""
        with self._lock:
            return EngineStats(
                slots_total=len(self._slots),
                slots_busy=sum(1 for s in self._slots if s.busy),
                prompt_tokens_processed=self._counts.processed,
                prompt_tokens_cached=self._counts.cached,
                decode_steps=self._steps,
                tokens_decoded=self._counts.tokens,
                requests_waiting=len(self._pending),
                draft_tokens=self._counts.drafted,
                draft_accepted=self._counts.accepted,
            )

    def reusable_prefix(self, tokens: list[int]) -> int:
        """A hint, from any thread: how many leading ``tokens`` a slot or a saved
        conversation holds now (it may change before the request is admitted)."""
        # ``list`` copies a slot's tokens in one step (the loop replaces or extends that
        # list, never leaves it half-written); the state cache copies its keys under its lock.
        held = max((common_prefix(list(slot.tokens), tokens) for slot in self._slots), default=0)
        return max(held, self._states.longest_prefix(tokens))

    def forget(self) -> None:
        """From any thread: drop every saved conversation (RAM copies, their files) and
        what idle slots hold, before the next request is admitted; a conversation still
        generating keeps its cells until its slot is next used."""
        with self._lock:
            self._forget_asked = True
            self._lock.notify()

    def _forgotten(self) -> None:
        """Do what ``forget`` asked, or a deletion in another process (the disk cache's
        folder removed: ``StateCache.deleted_elsewhere``) needs (loop thread, or after it
        ended). A slot still generating is emptied when its request ends (``_finish``)."""
        self._forget_asked = False
        self._states.clear()
        for slot in self._slots:
            if slot.busy:
                self._tainted.add(slot.seq)
            elif slot.tokens:
                self._windows.empty(slot)  # its window checkpoint is of that conversation too

    def persist(self) -> int:
        """After ``stop``: write what the slots and the RAM cache hold to the disk folder
        (if any), so the next load resumes these conversations; returns files written."""
        assert not self._thread.is_alive(), "persist only after the loop stopped"
        if self._forget_asked or self._states.deleted_elsewhere():
            self._forgotten()  # a deletion since load: nothing it may hold is written back
        written = self._states.persist()
        for slot in sorted(self._slots, key=lambda s: s.last_used):
            self._windows.save_as_of_prompt(slot)
            if len(slot.tokens) >= MIN_SAVED_TOKENS:
                self._states.save(slot.seq, slot.tokens)
                written += self._states.persist()
        self._states.unmark()
        return written

    # ------------------------------------------------------------- loop thread
    def _run(self) -> None:
        error: EdgeDeskError | None = None
        try:
            self._serve()
        except Exception as exc:  # a bug must reach the callers, never leave them hanging
            error = EdgeDeskError(
                f"the engine stopped unexpectedly ({exc!r}); load the model again"
            )
        with self._lock:
            self._stopping = True
            self._failure = error
            pending = list(self._pending)
            self._pending.clear()
        reason: FinishReason = "stop" if error is not None else "cancelled"
        for slot in self._slots:
            if slot.request is not None:
                self._finish(slot, reason, error)
        for request in pending:
            request.sampler.close()
            request.events.put(Finished(reason, len(request.tokens), 0, 0, error))

    def _serve(self) -> None:
        while True:
            with self._lock:
                while (
                    not self._stopping
                    and not self._forget_asked
                    and not self._pending
                    and not any(s.busy for s in self._slots)
                ):
                    self._lock.wait()
                if self._stopping:
                    return
                # A deletion in another process reaches this one before its next request.
                if self._forget_asked or (self._pending and self._states.deleted_elsewhere()):
                    self._forgotten()
                self._admit()
            self._retire()
            if any(s.busy for s in self._slots):
                self._step()

    def _admit(self) -> None:
        """Move queued requests into idle slots (caller holds the lock)."""
        now = time.perf_counter()
        for request in list(self._pending):
            gone = request.cancel.is_set() or request.abandoned.is_set()
            if gone or now > request.deadline:
                self._pending.remove(request)
                request.sampler.close()
                reason: FinishReason = "cancelled" if gone else "timeout"
                request.events.put(Finished(reason, len(request.tokens), 0, 0))
                continue
            choice = choose_slot(self._slots, request.tokens)
            if choice is None:
                return
            # The prompt and its first token must fit beside the running requests;
            # else it waits for them (in order: no later request overtakes it).
            if self._busy_cells() + len(request.tokens) + request.extra_cells + 1 > self._n_ctx:
                return
            self._pending.remove(request)
            slot, reuse = choice
            self._start(slot, request, reuse)

    @staticmethod
    def _cells(slot: Slot) -> int:
        """KV cells a slot holds or has been promised (its prompt still to decode)."""
        return len(slot.tokens) + len(slot.pending) + slot.extra_cells

    def _busy_cells(self) -> int:
        return sum(self._cells(s) for s in self._slots if s.busy)

    def _room(self, need: int, keep: Slot | None = None) -> int:
        """Free cells, after dropping idle slots' prefixes (LRU first, saved to RAM) until
        ``need`` fit; ``keep``'s own cells are left alone."""
        free = self._n_ctx - sum(self._cells(s) for s in self._slots if s is not keep)
        idle = sorted(
            (s for s in self._slots if not s.busy and s is not keep and s.tokens),
            key=lambda s: s.last_used,
        )
        for slot in idle:
            if free >= need:
                break
            free += len(slot.tokens) + slot.extra_cells  # all of it, checkpoint or not
            self._push_out(slot)
        return free

    def _push_out(self, slot: Slot, *, unless_lost: bool = False) -> bool:
        """Copy an idle slot's conversation to RAM (if the cache keeps it) and empty it;
        with ``unless_lost``, only if that loses nothing worth keeping. Whether emptied."""
        self._windows.save_as_of_prompt(slot)
        if not self._states.save(slot.seq, slot.tokens) and unless_lost:
            return False
        self._windows.empty(slot)
        return True

    def _clear_idle_for(self, slot: Slot, prompt: list[int], reuse: int) -> None:
        """Before ``prompt`` is read into ``slot``: the other idle slots' conversations
        leave the KV cache for RAM (see COLD_PROMPT_TOKENS). For a sliding-window model
        only before a long read; a prompt continuing one still in the RAM cache counts
        only what it adds."""
        if not self._states.keeps or not self._shared_cells:
            # Nowhere to keep them (emptied, they would be lost), or one stream per slot
            # (a decode attends to its own only, so moving them would gain nothing).
            return
        if self._windows.sized:
            if len(prompt) - reuse < COLD_PROMPT_TOKENS:
                return
            saved = self._states.best(prompt)  # the RAM cache's look-up only for a long one
            known = max(reuse, saved[1] if saved is not None else 0)
            if len(prompt) - known < COLD_PROMPT_TOKENS:
                return
        idle = [s for s in self._slots if s is not slot and not s.busy and s.tokens]
        # One the RAM cache cannot hold stays: its next turn would read it all again.
        moved = sum(self._push_out(other, unless_lost=True) for other in idle)
        if moved:
            log.debug(
                "slot %d: %d idle conversations moved to RAM before a %d-token prompt",
                slot.seq,
                moved,
                len(prompt) - reuse,
            )

    def _start(self, slot: Slot, request: Request, reuse: int) -> None:
        prompt = request.tokens
        if len(slot.tokens) - reuse >= MIN_SAVED_TOKENS:
            # The slot's conversation is being cut or pushed out: keep a copy in RAM,
            # so its next turn (or another client sharing its start) reuses it. A
            # sliding-window one as of its prompt's end, unless this request shares
            # part of the answer (then the slot's cells serve it better than a copy).
            if reuse <= slot.prompt_end:
                self._windows.save_as_of_prompt(slot)
            if len(slot.tokens) - reuse >= MIN_SAVED_TOKENS:
                self._states.save(slot.seq, slot.tokens)
        source = "slot"
        lender = self._lender(slot, prompt, reuse)
        if lender is not None:
            reuse = self._borrow(slot, lender[0], lender[1])
            source = f"cells of slot {lender[0].seq}"
        self._clear_idle_for(slot, prompt, reuse)
        free = (
            self._room(len(prompt) + request.extra_cells + 1, keep=slot)
            + len(slot.tokens)
            + slot.extra_cells
        )
        saved = self._states.best(prompt)
        if (
            saved is not None
            and saved[1] >= reuse + MIN_SAVED_TOKENS // 2
            and len(saved[0]) <= free
        ):  # restored whole, then cut to the shared part
            restored = self._states.restore(saved[0], slot.seq)
            # Its checkpoint was of what the slot held before; if llama.cpp refused the
            # copy, the sequence was emptied on the way.
            slot.emptied(saved[0] if restored else ())
            if restored:
                reuse = saved[1]
                source = "RAM cache"
            else:
                reuse = 0
        # At least one prompt token is decoded, so there are logits to sample from.
        # A sliding-window layer has dropped positions older than its window; a prefix
        # that ends before them is continued from the slot's checkpoint, or not at all.
        keep = self._windows.continuable(slot, min(reuse, len(prompt) - 1))
        while 0 < keep < len(prompt) and prompt[keep] < 0 and prompt[keep - 1] < 0:
            keep -= 1  # never keep half an image: it is decoded whole or not at all
        if keep > 0 and not llama_cpp.llama_memory_seq_rm(self._memory, slot.seq, keep, -1):
            keep = 0  # llama.cpp could not cut it there (it can always empty it)
        if keep == 0:
            self._windows.empty(slot)
        slot.admit(
            request, keep, draft_window=min(self._draft_max, LOOKUP_FIRST_WINDOW), step=self._steps
        )
        if self._draft_max > 0:
            request.history = bytearray(struct.pack(f"<{len(prompt)}i", *prompt))
        self._counts.cached += keep
        self._counts.processed += len(slot.pending)
        if request.progress:
            request.events.put(Reading(len(prompt) - len(slot.pending), len(prompt)))
        log.debug(
            "slot %d: request admitted, prefix reused %d/%d prompt tokens%s",
            slot.seq,
            keep,
            len(prompt),
            f" (from the {source})" if keep else "",
        )

    def _lender(self, slot: Slot, prompt: list[int], reuse: int) -> tuple[Slot, int] | None:
        """Another slot holding more of ``prompt``'s start than the ``reuse`` tokens
        ``slot`` holds, and how many tokens (None: none, or the cache is not unified).

        Only text before the prompt's first image is shared (an image's cells carry
        positions of their own), at least one prompt token is left to decode (for
        logits), a slot generating through a deletion lends nothing, and a sliding-window
        lender must still hold the window the next position attends to."""
        if not self._shared_cells:
            return None
        limit = len(prompt) - 1
        for index, token in enumerate(prompt[:limit]):
            if token < 0:
                limit = index
                break
        best: tuple[Slot, int] | None = None
        for other in self._slots:
            if other is slot or other.seq in self._tainted or len(other.tokens) <= reuse:
                continue
            if other.extra_cells:  # M-RoPE images: positions no longer follow the tokens
                continue
            shared = common_prefix(other.tokens, prompt[:limit])
            if shared <= max(reuse, best[1] if best is not None else 0):
                continue
            if self._windows.n_swa > 0 and not self._windows.holds(other.seq, shared):
                continue
            best = (other, shared)
        return best

    def _borrow(self, slot: Slot, lender: Slot, shared: int) -> int:
        """Make ``slot`` hold ``lender``'s first ``shared`` cells (the same cells, not a
        copy) in place of its own; returns ``shared``. The caller has saved what of
        ``slot``'s conversation is worth keeping."""
        self._windows.empty(slot)
        llama_cpp.llama_memory_seq_cp(self._memory, lender.seq, slot.seq, 0, shared)
        slot.emptied(lender.tokens[:shared])
        return shared

    def _retire(self) -> None:
        """Free the slots of requests that were cancelled, abandoned or ran out of time."""
        now = time.perf_counter()
        for slot in self._slots:
            request = slot.request
            if request is None:
                continue
            if request.cancel.is_set() or request.abandoned.is_set():
                self._finish(slot, "cancelled")
            elif now > request.deadline:
                self._finish(slot, "timeout")

    def _finish(self, slot: Slot, reason: FinishReason, error: Exception | None = None) -> None:
        request = slot.request
        assert request is not None
        request.sampler.close()
        log.debug(
            "slot %d: released (%s) after %d sampled tokens, holding %d",
            slot.seq,
            reason,
            slot.sampled,
            len(slot.tokens),
        )
        request.events.put(Finished(reason, len(request.tokens), slot.cached, slot.sampled, error))
        slot.release()
        if slot.seq in self._tainted:  # it generated through a deletion: keep none of it
            self._tainted.discard(slot.seq)
            self._windows.empty(slot)
        with self._lock:
            self._lock.notify_all()

    def _make_room_for_generation(self) -> None:
        """Each generating slot needs one more cell this step; when the cache is full,
        idle prefixes go first, then the request holding the most cells ends (length)."""
        growing = [s for s in self._slots if s.state is SlotState.GENERATING]
        while growing and self._room(len(growing)) < len(growing):
            longest = max(growing, key=self._cells)
            self._finish(longest, "length")
            growing.remove(longest)

    def _draft(self, slot: Slot, rows: int, cells: int) -> list[int]:
        """Prompt-lookup guesses to decode after the slot's next token, within ``rows``
        batch rows and ``cells`` free cells (none when drafting is off)."""
        request = slot.request
        if self._draft_max <= 0 or request is None:
            return []
        room = min(
            slot.draft_window,
            rows,
            cells,
            self._n_ctx - len(slot.tokens) - 2,
            request.max_tokens - slot.sampled - 1,
        )
        draft = lookup_draft(request.history, room) if room > 0 else []
        cut = next((i for i, token in enumerate(draft) if token < 0), None)
        return draft if cut is None else draft[:cut]  # never guess an image position

    def _guess_room(self, generating: int) -> tuple[int, int]:
        """Free cells and batch rows for this step's guesses, all slots together.

        A step that reads prompt text gets at most one guess per PROMPT_TOKENS_PER_GUESS
        of it: that prompt's request waits for the step (for its first token, or its next
        prefill piece), and each guess is a logits row of n_vocab floats (Gemma 3: more
        multiply-adds than the rest of the model per token). Beside a short newcomer they
        would make its step several times as long (docs/benchmarks.md, "Guesses beside a
        prompt"); a 2,048-token prefill piece hardly notices.
        """
        cells = self._n_ctx - sum(self._cells(s) for s in self._slots) - generating
        # the prompt text this step reads, as _step will fill it (shortest first, within
        # _read_limit)
        pending = self._reading()
        room = self._read_limit(generating, pending) - generating
        reading = 0
        for slot in pending:
            if reading < room:
                reading += _text_run(slot.pending, room - reading)
        # Guesses for a lone stream only. Beside another stream each guess row lengthens
        # the step every stream waits for (Gemma 3: a 262k-float logits row costs more
        # than the rest of a token), and the batch already keeps the cores busy: in the
        # IDE mix an autocomplete beside a copying chat took 3.4 s at p50 with guesses
        # and 0.52 s without (the chat's own decode fell from 106 to 33 tok/s while both
        # ran). vLLM's speculative_disable_by_batch_size makes the same trade.
        rows = LOOKUP_ROWS_PER_STEP if generating <= 1 else 0
        if reading > 0:
            # Guesses take their rows from the prefill piece: g of them leave reading - g >= 64 g.
            rows = min(rows, reading // (PROMPT_TOKENS_PER_GUESS + 1))
        if self._windows.sized:
            # One micro-batch only: llama.cpp places a later micro-batch of the same
            # decode in window cells that the guesses made look stale, and a guess sent
            # back would leave its sequence without them.
            rows = min(rows, max(0, self._n_ubatch - generating - reading))
        return cells, rows

    def _step(self) -> None:
        batch = self._batch
        n = 0
        generating = 0
        self._make_room_for_generation()
        self._decode_images()
        growing = [s for s in self._slots if s.state is SlotState.GENERATING]
        spare, guesses = self._guess_room(len(growing))
        for slot in self._slots:
            slot.output_index = -1
            if slot.state is SlotState.GENERATING:
                assert slot.next_token is not None  # sampled last step; decoded now
                rows = min(  # the batch's room; the guesses so far are n - generating
                    self._n_batch - n - (len(growing) - generating),
                    guesses - (n - generating),
                )
                draft = self._draft(slot, rows, spare)
                spare -= len(draft)
                first = n
                n = self._add(
                    n, slot, [slot.next_token, *draft], last_logits=True, all_logits=bool(draft)
                )
                slot.output_index = first
                slot.next_decoded(draft)
                generating += 1
        n, prompt, told = self._add_prompts(n)
        if n == 0:
            return
        batch.n_tokens = n
        started = time.perf_counter()
        code = llama_cpp.llama_decode(self._ctx, batch)
        if prompt >= ROW_BLOCK and code == 0:  # long enough to time (63 beside a stream)
            rate = prompt / max(1e-6, time.perf_counter() - started)
            self._read_rate = rate if self._read_rate is None else (self._read_rate + rate) / 2
        with self._lock:
            self._steps += 1
            self._counts.tokens += n
        if self._on_step is not None:
            guessed = sum(len(slot.draft) for slot in self._slots)  # this step's, till sampled
            self._on_step(Step(self._steps, generating, prompt, guessed))
        if code != 0:
            error = EdgeDeskError(
                f"llama.cpp could not decode (code {code}); the model may "
                "be out of memory: lower the context or parallel slots"
            )
            for slot in self._slots:
                if slot.request is not None and slot.output_index >= 0:
                    self._windows.empty(slot)
                    self._finish(slot, "stop", error)
            return
        for slot in told:
            if slot.request is not None and slot.pending:  # the last piece: a token next
                total = len(slot.request.tokens)
                slot.request.events.put(Reading(total - len(slot.pending), total))
        for slot in self._slots:
            if slot.request is not None and slot.output_index >= 0:
                self._sample(slot)

    def _add_prompts(self, n: int) -> tuple[int, int, list[Slot]]:
        """Fill the batch after its ``n`` generating rows with pieces of the prompts being
        read; returns the rows now, the prompt tokens added, and the slots whose requests
        are told how far they got once the step is decoded."""
        prompt = 0
        reading = self._reading()
        limit = self._read_limit(n, reading)
        told: list[Slot] = []  # slots whose requests hear how far their prompt got
        for slot in reading:  # shortest first: see _prompt_limit
            if n >= limit:
                break
            take = _text_run(slot.pending, limit - n)
            if take == 0:
                continue  # an image comes first: decoded at the next step's start
            if slot.request is not None and slot.request.progress:
                told.append(slot)
            n = self._add(n, slot, slot.pending[:take], last_logits=take == len(slot.pending))
            slot.read_prompt(take)
            prompt += take
        return n, prompt, told

    def _reading(self) -> list[Slot]:
        """The slots with prompt tokens still to read, shortest rest first."""
        return sorted(
            (s for s in self._slots if s.state is SlotState.PROMPT and s.pending),
            key=lambda s: len(s.pending),
        )

    def _read_limit(self, n: int, reading: list[Slot]) -> int:
        """The rows this step may hold, ``n`` of them its streams' tokens and guesses, with
        ``reading``'s prompts (shortest first) to fill the rest: ``_prompt_limit``, paced
        to about PROGRESS_STEP_S of reading (``progress_piece``), in whole ROW_BLOCKs."""
        # A window's chat hears of each step: micro-batches at most, so a fast reader
        # still says how far it got; a request that does not listen may take the batch.
        told_any = any(s.request is not None and s.request.progress for s in reading)
        most = self._n_ubatch if told_any else self._n_batch
        limit = min(self._prompt_limit(n, reading), n + progress_piece(self._read_rate, most))
        blocks = limit // ROW_BLOCK * ROW_BLOCK
        return blocks if blocks > n else limit

    def _prompt_limit(self, n: int, reading: list[Slot]) -> int:
        """How many tokens this step's batch may hold, ``n`` of them already generating
        tokens and guesses, with ``reading``'s prompts (shortest first) to fill the rest.

        The whole batch (``n_batch``), unless a short prompt shares the step with a long
        one: then one micro-batch (``n_ubatch``), which the short one's rest fits in. Its
        logits come when the whole decode ends, so an autocomplete beside an agent's
        8k-token prompt gets its first token after one micro-batch instead of four (and
        the running streams their next one); the long prompt reads on at full size at the
        next step. llama-server fills the batch in slot order, the long prompt first.
        """
        if len(reading) < 2 or self._n_ubatch >= self._n_batch:
            return self._n_batch
        shortest = _text_run(reading[0].pending, self._n_batch)
        if shortest == 0 or n + shortest > self._n_ubatch:
            return self._n_batch
        return self._n_ubatch

    def _decode_images(self) -> None:
        """Decode the image that starts each slot's pending prompt, one per slot per step,
        into the slot's own sequence (its own llama_decode calls: a batch cannot mix
        embeddings and tokens). Text streams wait for it as for one prefill piece."""
        for slot in self._slots:
            request = slot.request
            if request is None or not slot.pending or slot.pending[0] >= 0:
                continue
            start = len(slot.tokens)
            piece = request.media.get(start)
            code = -1 if piece is None else piece.decode(self._ctx, start, slot.seq, self._n_batch)
            if piece is None or code != 0:
                self._windows.empty(slot)
                self._finish(
                    slot,
                    "stop",
                    EdgeDeskError(
                        f"llama.cpp could not encode an image (code {code}); the model may be "
                        "out of memory: lower the context or parallel slots"
                    ),
                )
                continue
            with self._lock:
                self._counts.tokens += piece.n_pos
            slot.read_prompt(piece.n_pos)

    def _add(
        self, n: int, slot: Slot, tokens: list[int], *, last_logits: bool, all_logits: bool = False
    ) -> int:
        batch = self._batch
        pos = len(slot.tokens)
        seq = slot.seq
        count = len(tokens)
        for i, token in enumerate(tokens):
            j = n + i
            batch.token[j] = token
            batch.pos[j] = pos + i
            batch.n_seq_id[j] = 1
            batch.seq_id[j][0] = seq
            batch.logits[j] = int(all_logits)
        if last_logits:
            batch.logits[n + count - 1] = 1
            slot.output_index = n + count - 1
        return n + count

    def _sample(self, slot: Slot) -> None:
        """Sample the slot's next token; with a draft, keep sampling while each sample
        equals the guess decoded after it (exactly what one-by-one decoding would give,
        as every sample sees the same tokens before it), then drop the rest of the guess
        from the cache."""
        request = slot.request
        assert request is not None
        if slot.state is SlotState.PROMPT:  # its prompt's last prefill piece was just decoded
            self._windows.capture(slot)
        draft = slot.take_draft()
        index = slot.output_index
        accepted = 0
        for i in range(len(draft) + 1):
            token = request.sampler.sample(self._ctx, index + i)
            if not self._emit(slot, request, token, index + i):
                break
            if i < len(draft) and token == draft[i]:
                slot.guess_taken(token)  # its cells were decoded with the guess
                accepted += 1
                continue
            slot.sampled_next(token)
            break
        if draft:
            slot.draft_checked(len(draft), accepted, self._draft_max)
            with self._lock:
                self._counts.drafted += len(draft)
                self._counts.accepted += accepted
            if accepted < len(draft):
                llama_cpp.llama_memory_seq_rm(self._memory, slot.seq, len(slot.tokens), -1)

    def _emit(self, slot: Slot, request: Request, token: int, index: int) -> bool:
        """Hand a sampled token to its request; False when that ended the request."""
        slot.sampled += 1
        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            self._finish(slot, "stop")
            return False
        logprob = None
        if request.logprobs is not None:
            logprob = token_logprob(
                self._ctx,
                index,
                n_vocab=self._n_vocab,
                token=token,
                top=request.logprobs,
                piece=self._piece,
            )
        request.events.put(Token(token, logprob))
        if self._draft_max > 0:
            request.history += _TOKEN.pack(token)
        if slot.sampled >= request.max_tokens or len(slot.tokens) >= self._n_ctx:
            self._finish(slot, "length")
            return False
        return True


def _text_run(tokens: list[int], limit: int) -> int:
    """How many of the first ``limit`` tokens come before an image placeholder (a
    negative id)."""
    for index, token in enumerate(tokens[:limit]):
        if token < 0:
            return index
    return min(limit, len(tokens))
