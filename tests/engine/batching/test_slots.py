"""The slot engine with real llama.cpp and a tiny random-weight model: many streams at once.

Requests are lined up with ``LoopGate`` (tests/engine/loop_gate.py) and checked by what
each decode step carried: structure, not wall-clock.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.base.errors import EdgeDeskError
from desktop.engine._batching.loop import Step
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ADMITTED, ChatCall, Delta, GenerationParams, Message, TokenLogprob
from tests.engine.loop_gate import LoopGate, together, wait_for
from tests.near_tie import TokenStep, assert_same_answer, steps, steps_of_completion

GREEDY = GenerationParams(max_tokens=24, temperature=0.0)
PROMPTS = ["hello world the cat", "the dog is a model", "edge desk chat", "你好 world cat dog"]


@pytest.fixture(scope="module")
def gate() -> LoopGate:
    return LoopGate()


@pytest.fixture(scope="module")
def engine(tiny_chat: Path, gate: LoopGate) -> Iterator[LlamaEngine]:
    # One stream per slot: these tests compare answers alone and beside others token for
    # token, which a unified cache's attention does not promise (rare near-ties of the
    # random-weight model flip; tests/engine/batching/test_unified_cache.py covers that layout).
    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=512, parallel=4, kv_unified=False),
        model_id="tiny",
        on_step=gate,
    )
    yield engine
    engine.close()


def _run(stream: Iterator[Delta]) -> tuple[str, Delta]:
    chunks = list(stream)
    return "".join(c.text for c in chunks), chunks[-1]


def _completion(
    engine: LlamaEngine, prompt: str, params: GenerationParams = GREEDY
) -> tuple[str, Delta]:
    return _run(engine.stream_completion(prompt, params))


def _steps(
    engine: LlamaEngine, prompt: str, params: GenerationParams = GREEDY
) -> tuple[list[TokenStep], Delta]:
    """The greedy answer token by token, with the two best candidates of each step."""
    chunks = list(engine.stream_completion(prompt, replace(params, logprobs=2)))
    return steps(lp for c in chunks for lp in c.logprobs), chunks[-1]


# Alone and beside others, a slot's answer comes from batches of other shapes, which
# llama.cpp does not promise to round alike: the same answer is compared token by token,
# a flip allowed only at a near tie (tests/near_tie.py). The random-weight model's flat
# logits make near ties common, so a mixed-up slot is also checked to fail.


def test_greedy_output_is_the_same_alone_and_beside_three_others(
    engine: LlamaEngine, gate: LoopGate
) -> None:
    solo = [_steps(engine, p)[0] for p in PROMPTS]
    first = len(gate.steps)
    results_together = together(engine, gate, [lambda p=p: _steps(engine, p) for p in PROMPTS])
    assert max(s.generation_tokens for s in gate.steps[first:]) == 4  # really batched
    for prompt, alone, (beside, _) in zip(PROMPTS, solo, results_together, strict=True):
        assert_same_answer(alone, beside, prompt)
    with pytest.raises(AssertionError, match="not the same answer"):
        assert_same_answer(solo[0], results_together[1][0], "mixed up")


def test_greedy_output_is_what_llama_cpp_python_gives(engine: LlamaEngine, tiny_chat: Path) -> None:
    # Plain greedy skips llama.cpp's sampler chain (an argmax over the logits row); the
    # random-weight model's flat logits make near-ties common, so this would catch a
    # different choice between equal or close maxima (beyond a near tie: llama-cpp-python
    # decodes with its own batch plan).
    import llama_cpp

    direct = llama_cpp.Llama(str(tiny_chat), n_ctx=512, verbose=False, logits_all=True)
    try:
        for prompt in PROMPTS:
            expected = direct.create_completion(prompt, max_tokens=24, temperature=0.0, logprobs=2)
            reference = steps_of_completion(expected["choices"][0]["logprobs"])
            assert_same_answer(reference, _steps(engine, prompt)[0], prompt)
    finally:
        direct.close()


def test_eight_streams_of_mixed_lengths_all_complete(engine: LlamaEngine, gate: LoopGate) -> None:
    prompts = [PROMPTS[i % 4] + " " + "cat " * i for i in range(8)]
    params = [GenerationParams(max_tokens=4 + 5 * i, temperature=0.0) for i in range(8)]
    solo = [_steps(engine, p, q) for p, q in zip(prompts, params, strict=True)]
    first = len(gate.steps)
    results_together = together(
        engine,
        gate,
        [lambda p=p, q=q: _steps(engine, p, q) for p, q in zip(prompts, params, strict=True)],
    )
    for prompt, (answer, final), (alone, solo_final) in zip(
        prompts, results_together, solo, strict=True
    ):
        assert final.usage is not None and solo_final.usage is not None
        if assert_same_answer(alone, answer, prompt) == len(alone):  # no flip: nor its end
            assert final.usage.completion_tokens == solo_final.usage.completion_tokens
            assert final.finish_reason == solo_final.finish_reason
    assert max(s.generation_tokens for s in gate.steps[first:]) == 4  # never more than slots
    assert engine.stats().slots_busy == 0 and engine.stats().requests_waiting == 0


def test_cancelling_one_of_four_leaves_the_others_untouched(
    engine: LlamaEngine, gate: LoopGate
) -> None:
    params = GenerationParams(max_tokens=40, temperature=0.0)
    solo = [_steps(engine, p, params)[0] for p in PROMPTS[1:]]
    cancel = threading.Event()

    def cancelled() -> tuple[str, Delta]:
        seen = 0
        chunks = []
        for chunk in engine.stream_completion(PROMPTS[0], params, cancel):
            chunks.append(chunk)
            seen += 1
            if seen == 3:
                cancel.set()
        return "".join(c.text for c in chunks), chunks[-1]

    jobs: list[Callable[[], tuple[object, Delta]]] = [cancelled]
    jobs += [lambda p=p: _steps(engine, p, params) for p in PROMPTS[1:]]
    results = together(engine, gate, jobs)
    final = results[0][1]
    assert final.finish_reason == "cancelled"
    assert final.usage is not None and final.usage.completion_tokens <= 4
    for prompt, alone, (beside, _) in zip(PROMPTS[1:], solo, results[1:], strict=True):
        assert isinstance(beside, list)
        assert_same_answer(alone, beside, prompt)


def test_closing_a_stream_early_frees_its_slot(engine: LlamaEngine) -> None:
    stream = engine.stream_completion(PROMPTS[0], GenerationParams(max_tokens=400, temperature=0.0))
    assert next(stream) is ADMITTED  # checked and queued, its prompt not read yet
    next(stream)  # its first words: it holds a slot
    assert engine.stats().slots_busy == 1
    stream.close()
    wait_for(lambda: engine.stats().slots_busy == 0)


def test_second_turn_decodes_only_its_new_tokens(
    engine: LlamaEngine, caplog: pytest.LogCaptureFixture
) -> None:
    turn1 = [Message("system", "be brief"), Message("user", "hello world the cat dog")]
    answer, final1 = _run(engine.stream_chat(ChatCall.of(turn1, GREEDY)))
    assert final1.usage is not None
    before = engine.stats()
    turn2 = [*turn1, Message("assistant", answer), Message("user", "and the dog")]
    with caplog.at_level(logging.DEBUG, logger="edgedesk.engine"):
        _, final2 = _run(engine.stream_chat(ChatCall.of(turn2, GREEDY)))
    usage = final2.usage
    assert usage is not None
    processed = engine.stats().prompt_tokens_processed - before.prompt_tokens_processed
    assert usage.cached_tokens >= final1.usage.prompt_tokens - 1
    assert processed == usage.prompt_tokens - usage.cached_tokens
    # `edgedesk serve --log-level debug` says which slot took it and what it reused,
    # and when it let go of the slot; never the words.
    lines = [r.getMessage() for r in caplog.records if r.name == "edgedesk.engine"]
    assert re.fullmatch(
        rf"slot \d: request admitted, prefix reused {usage.cached_tokens}/"
        rf"{usage.prompt_tokens} prompt tokens \(from the slot\)",
        lines[0],
    )
    assert re.fullmatch(
        r"slot \d: released \((stop|length)\) after \d+ sampled tokens, "
        r"holding \d+",
        lines[1],
    ), lines
    assert not any("dog" in line or "brief" in line for line in lines)


def test_two_interleaved_conversations_both_keep_their_prefix(engine: LlamaEngine) -> None:
    a1 = [Message("system", "you are agent a " * 6), Message("user", "hello world")]
    b1 = [Message("system", "you are helper b " * 6), Message("user", "the cat")]
    answer_a, first_a = _run(engine.stream_chat(ChatCall.of(a1, GREEDY)))
    answer_b, first_b = _run(engine.stream_chat(ChatCall.of(b1, GREEDY)))
    a2 = [*a1, Message("assistant", answer_a), Message("user", "more")]
    b2 = [*b1, Message("assistant", answer_b), Message("user", "more")]
    _, second_a = _run(engine.stream_chat(ChatCall.of(a2, GREEDY)))
    _, second_b = _run(engine.stream_chat(ChatCall.of(b2, GREEDY)))
    assert first_a.usage is not None and second_a.usage is not None
    assert first_b.usage is not None and second_b.usage is not None
    assert second_a.usage.cached_tokens >= first_a.usage.prompt_tokens - 1
    assert second_b.usage.cached_tokens >= first_b.usage.prompt_tokens - 1


def test_a_long_prompt_delays_running_streams_by_at_most_one_chunk(tiny_chat: Path) -> None:
    gate = LoopGate()
    n_batch = 64
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=1024, parallel=4, n_batch=n_batch), on_step=gate
    )
    try:
        params = GenerationParams(max_tokens=200, temperature=0.0)
        started = [threading.Event() for _ in range(3)]
        finals: list[Delta] = []

        def stream(i: int) -> None:
            chunks = []
            for chunk in engine.stream_completion(PROMPTS[i], params):
                if not chunk.admitted:  # generating, not merely admitted
                    started[i].set()
                chunks.append(chunk)
            finals.append(chunks[-1])

        threads = [threading.Thread(target=stream, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        for event in started:
            event.wait()
        gate.hold()
        gate.held.wait()
        long_prompt = "hello world the cat " * 14
        newcomer: list[tuple[str, Delta]] = []
        late = threading.Thread(
            target=lambda: newcomer.append(
                _completion(engine, long_prompt, GenerationParams(max_tokens=4, temperature=0.0))
            )
        )
        late.start()
        try:
            wait_for(lambda: engine.stats().requests_waiting == 1)
            mark = len(gate.steps)
        finally:
            gate.release()
        late.join()
        for thread in threads:
            thread.join()
        prefill = [s for s in gate.steps[mark:] if s.prompt_tokens > 0]
        usage = newcomer[0][1].usage
        assert usage is not None and usage.prompt_tokens > 3 * n_batch
        # It starts as a running stream's prompt does: those cells are shared, not read.
        assert sum(s.prompt_tokens for s in prefill) == usage.prompt_tokens - usage.cached_tokens
        assert usage.prompt_tokens - usage.cached_tokens > 3 * n_batch
        assert len(prefill) >= 4  # chunked: the prompt took several steps...
        for step in prefill:  # ...and each still carried a token for every running stream
            assert step.generation_tokens == 3
            assert step.prompt_tokens + step.generation_tokens <= n_batch
        assert all(f.finish_reason == "length" for f in finals)
    finally:
        engine.close()


def test_a_short_prompt_beside_a_long_one_starts_after_one_micro_batch(tiny_chat: Path) -> None:
    # An autocomplete arriving with an agent's long prompt: it must not wait for the
    # long prompt's full-size pieces.
    gate = LoopGate()
    n_batch, n_ubatch = 256, 64
    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=2048, parallel=2, n_batch=n_batch, n_ubatch=n_ubatch),
        on_step=gate,
    )
    try:
        long_prompt = "alpha beta gamma delta " * 40  # several full-size pieces
        short_prompt = "def add(a, b):"
        params = GenerationParams(max_tokens=4, temperature=0.0)
        first = len(gate.steps)
        finals = together(
            engine,
            gate,
            [
                lambda: _completion(engine, long_prompt, params)[1],
                lambda: _completion(engine, short_prompt, params)[1],
            ],
        )
        long_usage, short_usage = finals[0].usage, finals[1].usage
        assert long_usage is not None and short_usage is not None
        assert long_usage.prompt_tokens > 2 * n_batch
        ran = gate.steps[first:]
        # (The long one may have had a step alone before the short one was admitted.)
        started = next(i for i, step in enumerate(ran) if step.generation_tokens > 0)
        # The short one generated first, while the long one read on at full size ...
        assert ran[started].generation_tokens == 1
        assert ran[started].prompt_tokens == n_batch - 1
        # ... its prompt read whole, beside the long one's, in one micro-batch.
        assert 0 < ran[started - 1].prompt_tokens <= n_ubatch
    finally:
        engine.close()


def test_concurrent_embed_calls_share_decodes(tiny_embed: Path) -> None:
    armed = threading.Event()
    held = threading.Event()
    release = threading.Event()

    def on_decode(_sequences: int) -> None:
        if armed.is_set():
            armed.clear()
            held.set()
            release.wait()

    engine = LlamaEngine(
        tiny_embed, LoadOptions(context_length=128, embedding=True), on_embed_decode=on_decode
    )
    try:
        texts = [["hello world"], ["the cat is a dog"], ["你好世界"], ["model chat desk"]]
        solo = [engine.embed(t)[0] for t in texts[:1]]
        armed.set()
        results: list[list[list[float]]] = [[] for _ in texts]
        before = engine.embed_decodes

        def call(i: int) -> None:
            results[i] = engine.embed(texts[i])

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        threads[0].start()
        held.wait()  # the first caller's decode is running; the others arrive meanwhile
        for thread in threads[1:]:
            thread.start()
        wait_for(lambda: engine._embedder is not None and engine._embedder.pending() == 4)
        release.set()
        for thread in threads:
            thread.join()
        assert engine.embed_decodes - before == 2  # four callers, two decodes
        assert engine.parallel == 4  # the scheduler lets embed callers in together
        assert engine.stats().embed_decodes == engine.embed_decodes
        assert all(len(r) == 1 and len(r[0]) == engine.embedding_dim() for r in results)
        assert sum(a * b for a, b in zip(results[0][0], solo[0], strict=True)) > 0.9999
    finally:
        engine.close()


def test_json_schema_on_two_slots_at_once(engine: LlamaEngine, gate: LoopGate) -> None:
    schema = json.dumps(
        {
            "type": "object",
            "properties": {"answer": {"enum": ["yes", "no"]}},
            "required": ["answer"],
            "additionalProperties": False,
        }
    )
    params = GenerationParams(max_tokens=60, temperature=0.0, json_schema=schema)
    results = together(
        engine,
        gate,
        [
            lambda p=p: _run(engine.stream_chat(ChatCall.of([Message("user", p)], params)))
            for p in PROMPTS[:2]
        ],
    )
    for text, final in results:
        assert final.finish_reason == "stop"
        assert json.loads(text)["answer"] in {"yes", "no"}


def test_a_conversation_pushed_out_of_every_slot_comes_back_from_ram(tiny_chat: Path) -> None:
    engine = LlamaEngine(tiny_chat, LoadOptions(context_length=512, parallel=1))
    try:
        conv_a = [Message("user", "hello world this is conversation a " * 4)]
        answer_a, first_a = _run(engine.stream_chat(ChatCall.of(conv_a, GREEDY)))
        _run(
            engine.stream_chat(ChatCall.of([Message("user", "a different conversation b")], GREEDY))
        )
        before = engine.stats()
        follow = [*conv_a, Message("assistant", answer_a), Message("user", "more")]
        _, final = _run(engine.stream_chat(ChatCall.of(follow, GREEDY)))
        assert first_a.usage is not None and final.usage is not None
        # The one slot held b, yet a's first prompt was not decoded again.
        assert final.usage.cached_tokens >= first_a.usage.prompt_tokens - 1
        processed = engine.stats().prompt_tokens_processed - before.prompt_tokens_processed
        assert processed == final.usage.prompt_tokens - final.usage.cached_tokens
    finally:
        engine.close()


def test_a_failure_in_the_decode_loop_reaches_every_caller(tiny_chat: Path) -> None:
    def broken(_step: Step) -> None:
        raise RuntimeError("boom")

    engine = LlamaEngine(tiny_chat, LoadOptions(context_length=256, parallel=2), on_step=broken)
    try:
        with pytest.raises(EdgeDeskError, match="stopped unexpectedly.*boom"):
            _completion(engine, PROMPTS[0])
        with pytest.raises(EdgeDeskError, match="stopped unexpectedly"):  # not queued forever
            _completion(engine, PROMPTS[1])
    finally:
        engine.close()


def test_a_failure_while_embedding_reaches_the_caller(tiny_embed: Path) -> None:
    def broken(_sequences: int) -> None:
        raise RuntimeError("boom")

    engine = LlamaEngine(
        tiny_embed, LoadOptions(context_length=128, embedding=True), on_embed_decode=broken
    )
    try:
        with pytest.raises(EdgeDeskError, match="embedding failed unexpectedly.*boom"):
            engine.embed(["hello world"])
    finally:
        engine.close()


def test_a_request_out_of_time_ends_with_timeout(engine: LlamaEngine) -> None:
    _, final = _completion(engine, PROMPTS[0], GenerationParams(max_tokens=50, timeout_s=0.0))
    assert final.finish_reason == "timeout"
    assert final.usage is not None and final.usage.completion_tokens == 0


def test_logprobs_come_with_each_token_from_its_own_slot(
    engine: LlamaEngine, gate: LoopGate
) -> None:
    params = GenerationParams(max_tokens=6, temperature=0.0, logprobs=2)

    def with_logprobs(prompt: str) -> tuple[str, list[TokenLogprob]]:
        chunks = list(engine.stream_completion(prompt, params))
        return "".join(c.text for c in chunks), [p for c in chunks for p in c.logprobs]

    for text, logprobs in together(
        engine, gate, [lambda p=p: with_logprobs(p) for p in PROMPTS[:2]]
    ):
        assert "".join(p.token for p in logprobs) == text  # one per token, in order
        assert len(logprobs) == 6
        for entry in logprobs:  # greedy: the token is its own best alternative
            assert len(entry.top) == 2 and entry.top[0] == (entry.token, entry.logprob)
            assert entry.logprob <= 0.0
