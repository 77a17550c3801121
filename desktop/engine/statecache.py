"""RAM copies of KV-cache sequences pushed out of every slot, so switching back is cheap.

When a slot is handed to an unrelated request, the conversation it held is copied out
with ``llama_state_seq_get_data``; a later request that starts the same way gets it
copied back into its slot (``llama_state_seq_set_data``) and decodes only the rest.
Bounded by bytes, least recently used out first.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict

import llama_cpp

from desktop.engine.slots import common_prefix

# Saving costs a copy of the sequence's KV cells; below this many tokens recomputing
# is as cheap, so short sequences are not kept.
MIN_SAVED_TOKENS = 32


class StateCache:
    """Saved sequences keyed by their tokens; used only by the decode loop thread."""

    def __init__(self, ctx: llama_cpp.llama_context_p, capacity_bytes: int) -> None:
        self._ctx = ctx
        self._capacity = capacity_bytes
        self._entries: OrderedDict[tuple[int, ...], ctypes.Array[ctypes.c_uint8]] = OrderedDict()
        self._bytes = 0
        self.restores = 0  # sequences copied back into a slot since load

    def save(self, seq: int, tokens: list[int]) -> None:
        """Copy sequence ``seq`` (holding ``tokens``) out, if it is worth it and fits."""
        if self._capacity <= 0 or len(tokens) < MIN_SAVED_TOKENS:
            return
        key = tuple(tokens)
        if key in self._entries:
            self._entries.move_to_end(key)
            return
        size = int(llama_cpp.llama_state_seq_get_size(self._ctx, seq))
        if size <= 0 or size > self._capacity:
            return
        buffer = (ctypes.c_uint8 * size)()
        if int(llama_cpp.llama_state_seq_get_data(self._ctx, buffer, size, seq)) != size:
            return
        while self._entries and self._bytes + size > self._capacity:
            _, old = self._entries.popitem(last=False)
            self._bytes -= len(old)
        self._entries[key] = buffer
        self._bytes += size

    def best(self, prompt: list[int]) -> tuple[tuple[int, ...], int] | None:
        """The saved sequence sharing the longest prefix with ``prompt``, and that length."""
        found: tuple[tuple[int, ...], int] | None = None
        for key in self._entries:
            shared = common_prefix(key, prompt)
            if shared > 0 and (found is None or shared > found[1]):
                found = (key, shared)
        return found

    def restore(self, key: tuple[int, ...], seq: int) -> bool:
        """Copy the saved ``key`` into (emptied) sequence ``seq``; False if llama.cpp refused."""
        buffer = self._entries.pop(key)
        self._bytes -= len(buffer)
        memory = llama_cpp.llama_get_memory(self._ctx)
        llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
        if int(llama_cpp.llama_state_seq_set_data(self._ctx, buffer, len(buffer), seq)) == 0:
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
            return False
        self.restores += 1
        return True
