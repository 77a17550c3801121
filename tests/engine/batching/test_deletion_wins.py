"""A deletion wins over the prompt cache's write-back: nothing a loaded model held when a
conversation was deleted is written to disk when it unloads, whether the deletion came
while that conversation was still generating or from another process (``chats rm`` in a
terminal while ``serve`` runs), which only removes the cache folder.

Real llama.cpp with the tiny random-weight model; checked by the engine's counters and
the files on disk, never by the clock.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import GenerationParams

GREEDY = GenerationParams(max_tokens=2, temperature=0.0)
LONG = GenerationParams(max_tokens=24, temperature=0.0)
PROMPT = "the quiet zebra keeps a secret ledger " * 8  # well over MIN_SAVED_TOKENS


def _engine(model: Path, folder: Path) -> LlamaEngine:
    options = LoadOptions(
        context_length=512,
        parallel=1,
        prompt_cache_dir=folder,
        prompt_cache_disk_bytes=64 * 1024 * 1024,
    )
    return LlamaEngine(model, options, model_id="tiny")


def _ask(engine: LlamaEngine, prompt: str = PROMPT) -> int:
    """Run one completion; the prompt tokens it found cached."""
    before = engine.stats().prompt_tokens_cached
    list(engine.stream_completion(prompt, GREEDY))
    return engine.stats().prompt_tokens_cached - before


def _holding(folder: Path, tokens: list[int]) -> list[Path]:
    """Files under ``folder`` holding the prompt's first token ids, as a plaintext cache
    keeps them (little-endian int32)."""
    needle = struct.pack(f"<{len(tokens)}i", *tokens)
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_the_guard_sees_a_written_back_conversation(tiny_chat: Path, tmp_path: Path) -> None:
    engine = _engine(tiny_chat, tmp_path)
    try:
        _ask(engine)
        tokens = engine.tokenize(PROMPT)[:16]
    finally:
        engine.close()
    assert _holding(tmp_path, tokens)  # so the empty scans below mean something


def test_a_conversation_generating_when_deleted_is_not_written_back(
    tiny_chat: Path, tmp_path: Path
) -> None:
    engine = _engine(tiny_chat, tmp_path)
    try:
        tokens = engine.tokenize(PROMPT)[:16]
        stream = iter(engine.stream_completion(PROMPT, LONG))
        while next(stream).admitted:
            pass  # until its first token: decoding in its slot
        engine.forget_saved()  # DELETE /v1/responses/R while its continuation runs
        assert list(stream)[-1].finish_reason == "length"  # it ran to its end
    finally:
        engine.close()
    assert _holding(tmp_path, tokens) == []


def test_a_deletion_in_another_process_reaches_the_running_engine(
    tiny_chat: Path, tmp_path: Path
) -> None:
    engine = _engine(tiny_chat, tmp_path)
    try:
        tokens = engine.tokenize(PROMPT)[:16]
        _ask(engine)
        # What a deletion does in another process (``forget_saved_conversations``):
        # the prompt cache folder goes; this engine was never told.
        shutil.rmtree(tmp_path)
        later = "a new conversation after the deletion " * 8
        later_tokens = engine.tokenize(later)[:16]
        _ask(engine, later)  # before it is admitted, the engine forgets what it held
        assert _ask(engine, later) > 0  # and keeps what came after
    finally:
        engine.close()
    assert _holding(tmp_path, tokens) == []
    # The later conversation is still written back: the engine saw the deletion before
    # it (at unload it would have dropped everything, this too).
    assert _holding(tmp_path, later_tokens)


def test_a_deletion_while_idle_is_seen_at_unload(tiny_chat: Path, tmp_path: Path) -> None:
    engine = _engine(tiny_chat, tmp_path)
    try:
        tokens = engine.tokenize(PROMPT)[:16]
        _ask(engine)
        shutil.rmtree(tmp_path)  # `chats rm --all` in a terminal, then `serve` stops
    finally:
        engine.close()
    assert _holding(tmp_path, tokens) == []
