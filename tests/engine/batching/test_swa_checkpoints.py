"""Sliding-window (SWA) models resume agent conversations from saved state.

Gemma 3's sliding-window layers attend to the last 512 positions only, so a saved
sequence restored from the RAM or disk cache can be continued from its end but not cut
back: an agent's next turn, whose answer the client re-renders, would re-read its whole
prompt. The engine saves such a conversation as it was at the end of its prompt (a
"context checkpoint", as llama-server names it), which the next turn shares whole.

Real llama.cpp with the real Gemma 3 270M; checked by what requests report
(``cached_tokens``) and the engine's counters.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message

pytestmark = pytest.mark.slow
# Lowercase words only, never an early stop: the generated answer differs from the
# agent's rendering of it from its first token, and is always 8 tokens to cut.
ANSWER = GenerationParams(max_tokens=8, temperature=0.0, grammar="root ::= [a-z ]{60}")
DISK = 256 * 1024 * 1024


def _run(stream: Iterator[Delta]) -> tuple[str, Delta]:
    chunks = list(stream)
    return "".join(c.text for c in chunks), chunks[-1]


def _agent(name: str) -> list[Message]:
    """An agent's first turn: a system prompt well past the 512-token window."""
    rules = f"You are {name}, a careful coding agent. Read files before editing them. " * 50
    return [Message("system", rules), Message("user", "Fix the failing test.")]


def _next_turn(history: list[Message], turn: int) -> list[Message]:
    # The agent re-renders the answer as its own tool call, never the generated text.
    return [
        *history,
        Message("assistant", f"READ_FILE(path='module_{turn}.py')"),
        Message("user", f"tool result {turn}: def f{turn}(): return {turn}"),
    ]


def _reused(prompt_tokens: int, final: Delta) -> None:
    """The new turn read back everything it shares with the previous prompt."""
    assert final.usage is not None
    assert final.usage.completion_tokens == ANSWER.max_tokens  # 8 answer tokens to cut
    assert final.usage.cached_tokens >= prompt_tokens - 1, (
        f"cached {final.usage.cached_tokens} of the {prompt_tokens} shared tokens"
    )


@pytest.mark.parametrize("side_request", [False, True], ids=["in-its-slot", "side-requests"])
def test_an_agents_turns_reuse_their_prompt_across_three_turns(
    gemma_path: Path, side_request: bool
) -> None:
    # With side requests between the turns (as Claude Code's title and summary calls),
    # the one slot is handed to them, and each turn comes back from the RAM cache.
    engine = LlamaEngine(gemma_path, LoadOptions(context_length=4096, parallel=1), model_id="gemma")
    try:
        history = _agent("agent one")
        _, final = _run(engine.stream_chat(ChatCall.of(history, ANSWER)))
        assert final.usage is not None and final.usage.prompt_tokens > 700
        for turn in (2, 3):
            if side_request:
                _run(
                    engine.stream_chat(
                        ChatCall.of([Message("user", f"Title for chat {turn}?")], ANSWER)
                    )
                )
            previous = final.usage.prompt_tokens
            history = _next_turn(history, turn)
            _, final = _run(engine.stream_chat(ChatCall.of(history, ANSWER)))
            _reused(previous, final)
    finally:
        engine.close()


def test_an_agent_resumes_after_a_restart_through_the_disk_cache(
    gemma_path: Path, tmp_path: Path
) -> None:
    options = LoadOptions(
        context_length=4096, parallel=2, prompt_cache_dir=tmp_path, prompt_cache_disk_bytes=DISK
    )
    history = _agent("agent two")
    engine = LlamaEngine(gemma_path, options, model_id="gemma")
    try:
        _, first = _run(engine.stream_chat(ChatCall.of(history, ANSWER)))
        history = _next_turn(history, 2)
        _, second = _run(engine.stream_chat(ChatCall.of(history, ANSWER)))
    finally:
        engine.close()  # the conversation goes to disk
    assert first.usage is not None and second.usage is not None
    _reused(first.usage.prompt_tokens, second)
    engine = LlamaEngine(gemma_path, options, model_id="gemma")  # the restart
    try:
        _, resumed = _run(engine.stream_chat(ChatCall.of(_next_turn(history, 3), ANSWER)))
        _reused(second.usage.prompt_tokens, resumed)
        assert resumed.usage is not None
        assert engine.stats().prompt_tokens_processed < resumed.usage.prompt_tokens - 700
    finally:
        engine.close()


def test_an_agent_pushed_out_of_its_slot_resumes_from_the_ram_cache(gemma_path: Path) -> None:
    engine = LlamaEngine(gemma_path, LoadOptions(context_length=4096, parallel=2), model_id="gemma")
    try:
        agents = {name: _agent(name) for name in ("agent a", "agent b", "agent c")}
        prompts = {}
        for name, history in agents.items():  # three conversations, two slots
            _, final = _run(engine.stream_chat(ChatCall.of(history, ANSWER)))
            assert final.usage is not None
            prompts[name] = final.usage.prompt_tokens
        _, back = _run(engine.stream_chat(ChatCall.of(_next_turn(agents["agent a"], 2), ANSWER)))
        _reused(prompts["agent a"], back)
    finally:
        engine.close()
