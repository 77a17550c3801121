"""A sliding-window model keeps only its window by default, and still reuses prompts.

Gemma 3's sliding-window layers (15 of its 18 in the 270M) attend to the last 512
positions. By default they keep only that window, as llama-server does, so the KV cache
is a fraction of the full-size one (which held every position of every slot); the next
turn of a conversation is continued from the slot's context checkpoint, taken at its
prompt's end. ``engine.swa_full_cache`` (``LoadOptions.swa_full``) brings back the
full-size cache.

Real llama.cpp with the real Gemma 3 270M; memory is the process's resident set (what a
user sees in a task manager), reuse is what the engine's counters say it decoded.
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import psutil
import pytest

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, GenerationParams, Message
from tests.benchmarks.bench_vs_llama_server import _system_prompt

pytestmark = pytest.mark.slow
MIB = 1024 * 1024
# Gemma 3 270M: 18 layers of one 256-wide KV head (f16 K and V: 1 KiB per layer and
# token), 3 of them global, 15 sliding (window 512).
KIB_PER_TOKEN_ALL, KIB_PER_TOKEN_GLOBAL = 18, 3
ANSWER = GenerationParams(max_tokens=8, temperature=0.0, grammar="root ::= [a-z ]{60}")


def _resident_growth(gemma_path: Path, options: LoadOptions) -> tuple[int, LlamaEngine]:
    """Bytes the process's resident set grew by while ``options`` loaded (and warmed up)."""
    gc.collect()
    before = psutil.Process().memory_info().rss
    engine = LlamaEngine(gemma_path, options, model_id="gemma")
    return psutil.Process().memory_info().rss - before, engine


def test_the_sliding_window_layers_keep_only_their_window_unless_told(gemma_path: Path) -> None:
    slots, context = 4, 8192
    sized, engine = _resident_growth(
        gemma_path, LoadOptions(context_length=context, parallel=slots)
    )
    engine.close()
    full, engine = _resident_growth(
        gemma_path, LoadOptions(context_length=context, parallel=slots, swa_full=True)
    )
    try:
        # The old layout: every layer keeps every position, one cache per slot.
        assert engine.context_length == context
    finally:
        engine.close()
    # Full size: 4 x 8192 x 18 KiB = 576 MiB of KV cache; window-sized: 8192 x 3 KiB for
    # the global layers, (4 x 512 + 512) x 15 KiB for the sliding ones = 61.5 MiB.
    saved = (slots * context * KIB_PER_TOKEN_ALL - context * KIB_PER_TOKEN_GLOBAL) * 1024
    saved -= (4 * 512 + 512) * (KIB_PER_TOKEN_ALL - KIB_PER_TOKEN_GLOBAL) * 1024
    assert full - sized > 0.8 * saved, (
        f"resident growth {sized / MIB:.0f} MiB by default, {full / MIB:.0f} MiB full-size"
    )
    assert sized < full / 2


def _agent_turns(engine: LlamaEngine) -> tuple[int, int, int]:
    """Two turns of an agent whose system prompt is well past the window; returns turn
    1's prompt tokens, turn 2's, and the prompt tokens the engine decoded for turn 2."""
    rules = "You are a careful coding agent. Read files before editing them. " * 60
    history = [Message("system", rules), Message("user", "Fix the failing test.")]
    first = list(engine.stream_chat(ChatCall.of(history, ANSWER)))[-1]
    # The agent re-renders the answer as its own tool call, never the generated text,
    # so the next prompt leaves the slot's tokens at the end of the first prompt.
    history += [
        Message("assistant", "READ_FILE(path='module.py')"),
        Message("user", "tool result: def f(): return 1"),
    ]
    before = engine.stats().prompt_tokens_processed
    second = list(engine.stream_chat(ChatCall.of(history, ANSWER)))[-1]
    assert first.usage is not None and second.usage is not None
    decoded = engine.stats().prompt_tokens_processed - before
    return first.usage.prompt_tokens, second.usage.prompt_tokens, decoded


@pytest.mark.parametrize("swa_full", [False, True], ids=["window-sized", "full-size"])
def test_an_agents_second_turn_rereads_only_what_is_new(gemma_path: Path, swa_full: bool) -> None:
    engine = LlamaEngine(
        gemma_path,
        LoadOptions(context_length=4096, parallel=4, swa_full=swa_full),
        model_id="gemma",
    )
    try:
        first, second, decoded = _agent_turns(engine)
    finally:
        engine.close()
    assert first > 700  # past the 512-token window: the window alone could not serve it
    # Turn 2 decodes its answer and tool result (about 40 tokens), not turn 1's prompt.
    assert decoded <= second - first + 2, f"turn 2 decoded {decoded} of {second} prompt tokens"


def test_an_agent_whose_window_others_took_comes_back_through_its_checkpoint(
    gemma_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Three other conversations with long prompts fill the four slots' shared window
    # cells: llama.cpp gives them the cells the agent no longer attends to, so the agent's
    # slot holds only its last window, past the end of its prompt. Its next turn, which
    # leaves the slot's tokens there, is cut back through the checkpoint, not re-read.
    # (Each prompt stays under COLD_PROMPT_TOKENS: a longer one moves the agent to the
    # RAM cache first, tests/engine/batching/test_unified_cache.py.)
    caplog.set_level(logging.DEBUG, logger="edgedesk.engine")
    engine = LlamaEngine(gemma_path, LoadOptions(context_length=8192, parallel=4), model_id="g")
    try:
        history = [
            Message("system", "You are the agent. Check every file twice. " * 80),
            Message("user", "Start."),
        ]
        first = list(engine.stream_chat(ChatCall.of(history, ANSWER)))[-1]
        assert first.usage is not None and first.usage.prompt_tokens > 700
        for name in ("ops", "docs", "sales"):
            others = [Message("user", _system_prompt(name, tokens=900) + " Summarise.")]
            list(engine.stream_chat(ChatCall.of(others, ANSWER)))
        history += [Message("assistant", "LIST()"), Message("user", "tool result: a.py")]
        before = engine.stats().prompt_tokens_processed
        final = list(engine.stream_chat(ChatCall.of(history, ANSWER)))[-1]
        assert final.usage is not None
        decoded = engine.stats().prompt_tokens_processed - before
    finally:
        engine.close()
    assert final.usage.cached_tokens >= first.usage.prompt_tokens - 1
    assert decoded <= final.usage.prompt_tokens - first.usage.prompt_tokens + 2
    assert any("cut back to its checkpoint" in r.getMessage() for r in caplog.records)
