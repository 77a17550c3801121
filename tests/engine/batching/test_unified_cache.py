"""One KV cache shared by the slots: long prompts, a full cache, agents' prompt caching.

Real llama.cpp with the tiny random-weight model; checked by what requests report
(usage, finish reasons, errors) and by the engine's counters, never by the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.base.errors import ContextOverflow
from desktop.engine._llama import LlamaEngine
from desktop.engine._llama_cpp import llama_cpp  # after the spin count, as the app
from desktop.engine._native import LoadOptions
from desktop.engine._prompting.volatile import stable_messages, strip_volatile
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message
from tests.engine.loop_gate import LoopGate, together, wait_for
from tests.near_tie import assert_same_answer, steps

GREEDY = GenerationParams(max_tokens=8, temperature=0.0)


def _run(stream: Iterator[Delta]) -> tuple[str, Delta]:
    chunks = list(stream)
    return "".join(c.text for c in chunks), chunks[-1]


@pytest.fixture
def small(tiny_chat: Path) -> Iterator[tuple[LlamaEngine, LoopGate]]:
    gate = LoopGate()
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=512, parallel=4), model_id="tiny", on_step=gate
    )
    yield engine, gate
    engine.close()


def test_one_request_may_use_the_whole_shared_context(small: tuple[LlamaEngine, LoopGate]) -> None:
    engine, _ = small
    assert engine.context_length == 512 and engine.parallel == 4
    prompt = "hello world the cat " * 16  # ~320 tokens: far more than a quarter of the cache
    _, final = _run(engine.stream_completion(prompt, GREEDY))
    assert final.usage is not None and final.usage.prompt_tokens > 512 // 4 * 2
    assert final.finish_reason in {"stop", "length"}


def test_a_prompt_longer_than_the_context_names_both_numbers(
    small: tuple[LlamaEngine, LoopGate],
) -> None:
    engine, _ = small
    with pytest.raises(ContextOverflow) as caught:
        list(engine.stream_completion("hello world the cat " * 40, GREEDY))
    error = caught.value
    assert error.n_ctx == 512 and error.prompt_tokens > 512
    assert str(error.prompt_tokens) in error.message and "512" in error.message
    assert error.http_status == 400


def test_a_full_cache_defers_and_shortens_but_every_request_ends(
    small: tuple[LlamaEngine, LoopGate],
) -> None:
    engine, gate = small
    # Four prompts of ~120 tokens, each asking for 300 more: together they need far
    # more than the 512 cells. Some wait for room, the rest end at the cache's edge.
    prompts = [f"{word} " + "hello world the cat " * 6 for word in ("a", "b", "c", "d")]
    params = GenerationParams(max_tokens=300, temperature=0.0)
    results = together(
        engine, gate, [lambda p=p: _run(engine.stream_completion(p, params)) for p in prompts]
    )
    finals = [final for _, final in results]
    assert all(f.finish_reason in {"stop", "length"} for f in finals)
    completions = [f.usage.completion_tokens for f in finals if f.usage is not None]
    assert len(completions) == 4 and max(completions) == 300  # the last one had room
    assert min(completions) < 300  # the others ended at the cache's edge
    stats = engine.stats()
    assert stats.slots_busy == 0 and stats.requests_waiting == 0
    # The engine still serves: nothing was left broken by the full cache.
    _, after = _run(engine.stream_completion(prompts[0], GREEDY))
    assert after.finish_reason in {"stop", "length"}


def test_requests_that_fit_beside_each_other_run_together(
    small: tuple[LlamaEngine, LoopGate],
) -> None:
    engine, gate = small
    params = GenerationParams(max_tokens=16, temperature=0.0)
    first = len(gate.steps)
    prompts = ["hello world", "the cat", "the dog", "edge desk"]
    together(engine, gate, [lambda p=p: _run(engine.stream_completion(p, params)) for p in prompts])
    assert max(s.generation_tokens for s in gate.steps[first:]) == 4


BILLING = "x-anthropic-billing-header: cc_version=2.1.37.{v}; cc_entrypoint=cli; cch={c};"


def test_volatile_lines_are_removed_exactly() -> None:
    system = BILLING.format(v="0d9", c="fa690") + "\nYou are Claude Code.\nBe brief."
    assert strip_volatile(system) == "You are Claude Code.\nBe brief."
    # Joined without a newline (as llama-server sees the blocks): the text after stays.
    assert strip_volatile(BILLING.format(v="0d9", c="fa690") + "You are") == "You are"
    # Anywhere else, or not at a line's start, the text is the user's: left alone.
    quoted = "Explain this header: x-anthropic-billing-header: cch=1;"
    assert strip_volatile(quoted) == quoted
    user = [Message("user", BILLING.format(v="1", c="2"))]
    assert stable_messages(user) == user


def test_a_changing_billing_line_does_not_defeat_the_prefix_cache(
    small: tuple[LlamaEngine, LoopGate],
) -> None:
    engine, _ = small
    tools_text = "you are a coding agent with many tools " * 8

    def turn(nonce: str, extra: list[Message]) -> tuple[str, Delta]:
        system = BILLING.format(v=nonce[:3], c=nonce) + "\n" + tools_text
        return _run(
            engine.stream_chat(
                ChatCall.of(
                    [Message("system", system), Message("user", "list the files"), *extra], GREEDY
                )
            )
        )

    answer, first = turn("aaaaa", [])
    _, second = turn("bbbbb", [Message("assistant", answer), Message("user", "and now?")])
    assert first.usage is not None and second.usage is not None
    assert second.usage.cached_tokens >= first.usage.prompt_tokens - 1


def test_conversations_survive_unloading_through_the_disk_cache(
    tiny_chat: Path, tmp_path: Path
) -> None:
    options = LoadOptions(
        context_length=512,
        parallel=2,
        prompt_cache_dir=tmp_path,
        prompt_cache_disk_bytes=64 * 1024 * 1024,
    )
    session = [
        Message("system", "you are agent a with a long system prompt " * 6),
        Message("user", "hello world the cat"),
    ]
    engine = LlamaEngine(tiny_chat, options, model_id="tiny")
    try:
        answer, first = _run(engine.stream_chat(ChatCall.of(session, GREEDY)))
    finally:
        engine.close()  # the slot's conversation goes to disk
    assert first.usage is not None
    assert list(tmp_path.rglob("*.kv"))
    engine = LlamaEngine(tiny_chat, options, model_id="tiny")
    try:
        nxt = [*session, Message("assistant", answer), Message("user", "and the dog")]
        _, resumed = _run(engine.stream_chat(ChatCall.of(nxt, GREEDY)))
        assert resumed.usage is not None
        assert resumed.usage.cached_tokens >= first.usage.prompt_tokens - 1
        assert engine.stats().prompt_tokens_processed < resumed.usage.prompt_tokens
    finally:
        engine.close()


def test_a_damaged_disk_cache_file_is_a_miss_not_a_crash(tiny_chat: Path, tmp_path: Path) -> None:
    options = LoadOptions(
        context_length=512,
        parallel=2,
        prompt_cache_dir=tmp_path,
        prompt_cache_disk_bytes=64 * 1024 * 1024,
    )
    session = [
        Message("system", "you are agent b with a long system prompt " * 6),
        Message("user", "the cat"),
    ]
    engine = LlamaEngine(tiny_chat, options, model_id="tiny")
    try:
        answer, _ = _run(engine.stream_chat(ChatCall.of(session, GREEDY)))
    finally:
        engine.close()
    [saved] = list(tmp_path.rglob("*.kv"))
    data = bytearray(saved.read_bytes())
    data[-10:] = b"\xff" * 10  # the state, not the tokens: only its checksum tells
    saved.write_bytes(bytes(data))
    engine = LlamaEngine(tiny_chat, options, model_id="tiny")
    try:
        nxt = [*session, Message("assistant", answer), Message("user", "more")]
        _, again = _run(engine.stream_chat(ChatCall.of(nxt, GREEDY)))
        assert again.usage is not None and again.usage.cached_tokens == 0
        assert again.finish_reason in {"stop", "length"}
    finally:
        engine.close()


def test_a_request_waiting_for_room_can_still_be_cancelled(
    small: tuple[LlamaEngine, LoopGate],
) -> None:
    engine, _ = small
    long_params = GenerationParams(max_tokens=400, temperature=0.0)
    hog = engine.stream_completion("hello world the cat " * 15, long_params)
    assert next(hog).admitted
    next(hog)  # running, holding most of the cache
    cancel = threading.Event()
    finals: list[Delta] = []
    waiter = threading.Thread(
        target=lambda: finals.append(
            _run(engine.stream_completion("the dog " * 30, GREEDY, cancel))[1]
        )
    )
    waiter.start()
    wait_for(lambda: engine.stats().requests_waiting == 1)  # no room beside the hog
    cancel.set()
    waiter.join()
    assert finals[0].finish_reason == "cancelled"
    hog.close()


@pytest.mark.slow
def test_a_q8_0_cache_loads_on_the_cpu_and_answers_like_f16(gemma_path: Path) -> None:
    # A quantized V cache needs flash attention (llama.cpp refuses it otherwise).
    ask = [Message("user", "What is the capital of France? One word.")]
    params = GenerationParams(max_tokens=8, temperature=0.0, logprobs=2)
    answers = []
    for cache in ("f16", "q8_0"):
        engine = LlamaEngine(
            gemma_path, LoadOptions(context_length=1024, cache_type=cache), model_id="gemma"
        )
        try:
            chunks = list(engine.stream_chat(ChatCall.of(ask, params)))
        finally:
            engine.close()
        assert chunks[-1].finish_reason in {"stop", "length"}
        answers.append(steps(lp for c in chunks for lp in c.logprobs))
    # 8 tokens, the same answer: a flip only at a near tie (tests/near_tie.py), as the
    # quantized cache rounds otherwise (and flash attention computes in another order).
    assert answers[0]
    assert_same_answer(answers[0], answers[1], "q8_0 cache")


def _cells_held(engine: LlamaEngine) -> list[int]:
    """KV cells each sequence holds now (read while the decode loop is held)."""
    memory = llama_cpp.llama_get_memory(engine._ctx)
    return [int(llama_cpp.llama_memory_seq_pos_max(memory, seq)) + 1 for seq in range(4)]


def _held_during(engine: LlamaEngine, gate: LoopGate, prompt: str) -> tuple[list[int], Delta]:
    """Cells per sequence right after ``prompt``'s first decode, and how it ended."""
    gate.hold()
    done: list[tuple[str, Delta]] = []
    worker = threading.Thread(
        target=lambda: done.append(_run(engine.stream_completion(prompt, GREEDY)))
    )
    worker.start()
    try:
        wait_for(gate.held.is_set)
        held = _cells_held(engine)
    finally:
        gate.release()
    worker.join()
    return held, done[0][1]


def test_idle_conversations_move_to_ram_before_each_request_and_come_back(
    tiny_chat: Path,
) -> None:
    # llama.cpp's attention spans every cell in use, whoever holds it: a request read or
    # decoded beside kept conversations pays for them (issues 36 and 47). As llama-server
    # does by default, they move to the RAM cache before any request (short or long) is
    # read, and their next turn still reuses them.
    gate = LoopGate()
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=4096, parallel=4), model_id="tiny", on_step=gate
    )
    try:
        first = "agent one: " + "hello world the cat " * 8
        answer, one = _run(engine.stream_completion(first, GREEDY))
        assert one.usage is not None and one.usage.prompt_tokens > 100

        short_held, short = _held_during(engine, gate, "short one: " + "the cat sat " * 5)
        assert short.usage is not None and short.usage.prompt_tokens < one.usage.prompt_tokens
        # While the short prompt is read, the cache holds it alone.
        assert sorted(short_held)[-2] == 0, short_held
        assert 0 < max(short_held) <= short.usage.prompt_tokens, short_held

        long_held, long = _held_during(engine, gate, "long one: " + "desk edge model chat " * 80)
        assert long.usage is not None and long.usage.prompt_tokens > 1024
        assert sorted(long_held)[-2] == 0 and max(long_held) > 1024, long_held

        _, again = _run(engine.stream_completion(first + answer + " and then", GREEDY))
    finally:
        engine.close()
    assert again.usage is not None
    assert again.usage.cached_tokens >= one.usage.prompt_tokens - 1  # from the RAM cache


def test_an_idle_conversation_too_big_for_the_ram_cache_stays_in_its_slot(
    tiny_chat: Path,
) -> None:
    # Moved out, it would be lost (the RAM cache's budget is under its copy), and its
    # next turn would read it all again: it stays, and that turn reuses it from its slot.
    gate = LoopGate()
    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=4096, parallel=4, state_cache_bytes=4096),
        model_id="tiny",
        on_step=gate,
    )
    try:
        first = "agent one: " + "hello world the cat " * 8
        answer, one = _run(engine.stream_completion(first, GREEDY))
        assert one.usage is not None
        held, _ = _held_during(engine, gate, "short one: " + "the cat sat " * 5)
        assert max(held) >= one.usage.prompt_tokens, held  # still there (the new one is shorter)
        _, again = _run(engine.stream_completion(first + answer + " and then", GREEDY))
    finally:
        engine.close()
    assert again.usage is not None
    assert again.usage.cached_tokens >= one.usage.prompt_tokens - 1


def test_one_stream_per_slot_keeps_idle_conversations_in_place(tiny_chat: Path) -> None:
    # With one stream of cells per slot (``kv_unified=False``) a decode attends to its own
    # stream only: moving the others out would cost a copy and gain nothing.
    gate = LoopGate()
    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=1024, parallel=4, kv_unified=False),
        model_id="tiny",
        on_step=gate,
    )
    try:
        first = "agent one: " + "hello world the cat " * 8
        _, one = _run(engine.stream_completion(first, GREEDY))
        held, _ = _held_during(engine, gate, "short one: " + "the cat sat " * 5)
    finally:
        engine.close()
    assert one.usage is not None
    assert max(held) > one.usage.prompt_tokens  # the first conversation stayed in its slot


@pytest.mark.slow
def test_an_agents_next_turn_reuses_its_prompt_after_a_long_answer(gemma_path: Path) -> None:
    # Gemma 3 has sliding-window layers (512 tokens). The next turn replaces the answer
    # with the client's own rendering, so only the prompt before it is shared; after an
    # answer longer than the window that prefix must still be reusable.
    engine = LlamaEngine(gemma_path, LoadOptions(context_length=4096), model_id="gemma")
    try:
        first = [
            Message("system", "You are a careful coding agent. Read files first. " * 30),
            Message("user", "Fix the failing test."),
        ]
        _, one = _run(
            engine.stream_chat(
                ChatCall.of(first, GenerationParams(max_tokens=560, temperature=0.0))
            )
        )
        second = [
            *first,
            Message("assistant", "Let me look at module 1."),
            Message("user", "tool output: ok"),
        ]
        _, two = _run(engine.stream_chat(ChatCall.of(second, GREEDY)))
    finally:
        engine.close()
    assert one.usage is not None and two.usage is not None
    assert one.usage.completion_tokens > 512 or one.finish_reason == "stop"
    assert two.usage.cached_tokens >= one.usage.prompt_tokens - 1
