"""A new conversation shares another slot's cells for the start their prompts have in
common (one unified KV cache), and neither conversation loses anything by it.

Real llama.cpp with the tiny random-weight model; checked by what requests report
(usage's cached tokens, answers within the near-tie rule), never by the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message
from tests.engine.loop_gate import LoopGate, wait_for
from tests.near_tie import TokenStep, assert_same_answer, steps

GREEDY = GenerationParams(max_tokens=8, temperature=0.0, logprobs=2)
# A short shared system prompt and long, different user messages: the share is far
# under half of a slot's tokens, so a new conversation takes an empty slot of its own.
SYSTEM = Message("system", "you are a careful helper")
FIRST = Message("user", "hello world the cat sat on the mat " * 5)
SECOND = Message("user", "the dog ran after the ball in the park " * 5)


def _run(engine: LlamaEngine, messages: list[Message]) -> tuple[list[TokenStep], Delta]:
    chunks = list(engine.stream_chat(ChatCall.of(messages, GREEDY)))
    return steps(lp for c in chunks for lp in c.logprobs), chunks[-1]


def _cached(final: Delta) -> int:
    assert final.usage is not None
    return final.usage.cached_tokens


@pytest.fixture
def engine(tiny_chat: Path) -> Iterator[tuple[LlamaEngine, LoopGate]]:
    gate = LoopGate()
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=1024, parallel=4), model_id="tiny", on_step=gate
    )
    yield engine, gate
    engine.close()


@pytest.fixture(scope="module")
def fresh(tiny_chat: Path) -> Iterator[LlamaEngine]:
    """The reference: every prompt read whole, one stream per slot, no sharing."""
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=1024, parallel=1, kv_unified=False), model_id="t"
    )
    yield engine
    engine.close()


def _prefix_tokens(engine: LlamaEngine) -> int:
    """Tokens the two conversations' prompts start with in common."""
    a = engine.prompt_tokens(engine.render(ChatCall.of([SYSTEM, FIRST], GREEDY)))
    b = engine.prompt_tokens(engine.render(ChatCall.of([SYSTEM, SECOND], GREEDY)))
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_a_new_conversation_reads_only_what_it_does_not_share(
    engine: tuple[LlamaEngine, LoopGate], fresh: LlamaEngine
) -> None:
    eng, _ = engine
    first_steps, first = _run(eng, [SYSTEM, FIRST])
    second_steps, second = _run(eng, [SYSTEM, SECOND])
    shared = _prefix_tokens(eng)
    assert shared > 5  # the template header and the system prompt
    # The second conversation took its own slot but read the common start from the
    # first one's cells ...
    assert _cached(second) == shared
    # ... and the first conversation still holds all of its prompt for its next turn.
    answer = "".join(s.token for s in first_steps)
    _, third = _run(eng, [SYSTEM, FIRST, Message("assistant", answer), Message("user", "more")])
    assert first.usage is not None and _cached(third) >= first.usage.prompt_tokens - 1
    # Shared cells give the answer a prompt read whole gives.
    reference, _ = _run(fresh, [SYSTEM, SECOND])
    assert_same_answer(reference, second_steps, "the second conversation")
    assert_same_answer(_run(fresh, [SYSTEM, FIRST])[0], first_steps, "the first")


def test_a_conversation_still_generating_lends_its_prompt_start(
    engine: tuple[LlamaEngine, LoopGate], fresh: LlamaEngine
) -> None:
    eng, gate = engine
    long = GenerationParams(max_tokens=64, temperature=0.0, logprobs=2)
    out: list[list[Delta]] = []
    second: list[tuple[list[TokenStep], Delta]] = []
    gate.hold()  # the loop stops after its first decode: the first prompt, read
    first = threading.Thread(
        target=lambda: out.append(list(eng.stream_chat(ChatCall.of([SYSTEM, FIRST], long))))
    )
    first.start()
    try:
        wait_for(gate.held.is_set)
        assert eng.stats().slots_busy == 1  # mid-answer when the second one comes
        later = threading.Thread(target=lambda: second.append(_run(eng, [SYSTEM, SECOND])))
        later.start()
        wait_for(lambda: eng.stats().requests_waiting == 1)
    finally:
        gate.release()
    later.join()
    first.join()
    second_steps, second_final = second[0]
    assert _cached(second_final) == _prefix_tokens(eng)
    reference, _ = _run(fresh, [SYSTEM, SECOND])
    assert_same_answer(reference, second_steps, "beside the first")
    first_steps = steps(lp for c in out[0] for lp in c.logprobs)
    fresh_first = list(fresh.stream_chat(ChatCall.of([SYSTEM, FIRST], long)))
    assert_same_answer(steps(lp for c in fresh_first for lp in c.logprobs), first_steps, "lender")


def test_shared_cells_outlive_the_conversation_that_lent_them(
    engine: tuple[LlamaEngine, LoopGate], fresh: LlamaEngine
) -> None:
    eng, _ = engine
    _run(eng, [SYSTEM, FIRST])
    second_steps, second = _run(eng, [SYSTEM, SECOND])
    assert _cached(second) > 0
    # Four unrelated conversations take every slot, the lender's included.
    for word in ("alpha", "beta", "gamma"):
        _run(eng, [Message("user", f"{word} " * 40)])
    answer = "".join(s.token for s in second_steps)
    follow = [SYSTEM, SECOND, Message("assistant", answer), Message("user", "more")]
    follow_steps, follow_up = _run(eng, follow)
    assert second.usage is not None and _cached(follow_up) >= second.usage.prompt_tokens - 1
    assert_same_answer(_run(fresh, follow)[0], follow_steps, "after the lender left")


def test_one_stream_per_slot_shares_nothing(tiny_chat: Path) -> None:
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=512, parallel=4, kv_unified=False), model_id="s"
    )
    try:
        _run(engine, [SYSTEM, FIRST])
        _, second = _run(engine, [SYSTEM, SECOND])
        assert _cached(second) == 0  # separate streams: a copy would be needed, none is made
    finally:
        engine.close()
