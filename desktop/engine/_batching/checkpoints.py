"""Sliding-window slots: whether a slot can be continued, and cutting it back inside its
window through its context checkpoint.

A model's sliding-window layers attend to the last ``n_swa`` positions only. With a
full-size SWA cache (``swa_full``) they still hold every position, so cutting a slot
back is removing its later cells. With a SWA-sized cache (the default, as llama-server)
they hold only the window: when a slot's prompt has been decoded the loop keeps a
*context checkpoint* of it (``llama_state_seq_get_data_ext`` with
``LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY``: the windowed layers' state at the prompt's end),
and a cut back to that point copies it back after the later cells are removed. An
agent's next turn shares the previous prompt but never the answer (the client renders
it again), so the prompt's end is the one point worth cutting back to.
"""

from __future__ import annotations

import ctypes
import logging

from desktop.engine._batching.slots import Slot
from desktop.engine._batching.statecache import MIN_SAVED_TOKENS
from desktop.engine._llama_cpp import llama_cpp

log = logging.getLogger("edgedesk.engine")  # the engine's one log, as _batching/loop.py


class SlotWindows:
    """Cuts, checkpoints and window checks for one context's sequences.

    Decode loop thread only (or after the loop ended), like the slots it is given.
    """

    def __init__(self, ctx: llama_cpp.llama_context_p, n_swa: int, swa_full: bool) -> None:
        self._ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self.n_swa = n_swa  # 0: no sliding-window layers
        # Sliding-window layers hold only their window: cuts go through the checkpoint.
        self.sized = n_swa > 0 and not swa_full

    def save_as_of_prompt(self, slot: Slot) -> None:
        """Before a sliding-window conversation is saved: cut it back to its last prompt's
        end, so the saved state is one the next turn can continue (a restored SWA
        sequence holds only its window: it can be continued, never cut back)."""
        end = min(slot.prompt_end, len(slot.tokens))
        if self.n_swa <= 0 or end < MIN_SAVED_TOKENS or end == len(slot.tokens):
            return
        if not self.cut(slot, end):
            return  # the sequence is saved whole: it resumes only where it ends
        log.debug(
            "slot %d: saved as of its prompt's end (%d of %d tokens: sliding window)",
            slot.seq,
            end,
            len(slot.tokens),
        )
        slot.cut_back(end)

    def empty(self, slot: Slot) -> None:
        """Remove every cell of the slot's sequence, and what the slot says it held (its
        checkpoint and image cells with it): the one way the loop empties a sequence."""
        llama_cpp.llama_memory_seq_rm(self._memory, slot.seq, -1, -1)
        slot.emptied()

    def cut(self, slot: Slot, end: int) -> bool:
        """Cut the slot's sequence back to its first ``end`` tokens; False when it cannot
        be (then it holds what it held, or nothing: ``slot.tokens`` says)."""
        if not self.sized:
            return bool(llama_cpp.llama_memory_seq_rm(self._memory, slot.seq, end, -1))
        saved = slot.checkpoint
        if saved is None or slot.checkpoint_at != end or end > len(slot.tokens):
            return False
        if not llama_cpp.llama_memory_seq_rm(self._memory, slot.seq, end, -1):
            return False
        flags = llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        copied = llama_cpp.llama_state_seq_set_data_ext(
            self._ctx, saved, len(saved), slot.seq, flags
        )
        if int(copied) == 0:
            # Its window layers were emptied on the way: the sequence is of no use.
            self.empty(slot)
            return False
        return True

    def capture(self, slot: Slot) -> None:
        """Keep the slot's context checkpoint: its window layers' state now, at its
        prompt's end (just decoded, before the answer). One per slot, replaced by the
        next prompt's; only for a SWA-sized cache and a prompt worth keeping."""
        slot.keep_checkpoint(None)  # the old copy goes before the new one is allocated
        if not self.sized or len(slot.tokens) < MIN_SAVED_TOKENS:
            return
        flags = llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        size = int(llama_cpp.llama_state_seq_get_size_ext(self._ctx, slot.seq, flags))
        if size <= 0:
            return
        buffer = (ctypes.c_uint8 * size)()
        got = llama_cpp.llama_state_seq_get_data_ext(self._ctx, buffer, size, slot.seq, flags)
        if int(got) != size:
            return
        slot.keep_checkpoint(buffer)

    def holds(self, seq: int, keep: int) -> bool:
        """Whether sequence ``seq`` can be continued after its first ``keep`` positions:
        its sliding-window layers still hold what the next position attends to."""
        pos_min = int(llama_cpp.llama_memory_seq_pos_min(self._memory, seq))
        # Position p attends to positions p - n_swa + 1 .. p (llama.cpp's is_masked_swa).
        return 0 <= pos_min <= max(0, keep - self.n_swa + 1)

    def continuable(self, slot: Slot, keep: int) -> int:
        """How many of the slot's first ``keep`` tokens a request can continue from: all
        of them, those up to its checkpoint (copied back), or none."""
        if keep <= 0 or self.n_swa <= 0 or self.holds(slot.seq, keep):
            return keep
        at = slot.checkpoint_at
        if not self.sized or slot.checkpoint is None or at > len(slot.tokens):
            return 0
        if not self.cut(slot, at):
            return 0
        slot.cut_back(at)
        kept = min(keep, at)
        if kept < at and not llama_cpp.llama_memory_seq_rm(self._memory, slot.seq, kept, -1):
            return 0
        if not self.holds(slot.seq, kept):
            return 0
        log.debug("slot %d: cut back to its checkpoint (%d tokens)", slot.seq, kept)
        return kept
