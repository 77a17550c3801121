"""Prompt-lookup (n-gram) drafting: the same greedy answer with and without, fewer steps."""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine._batching import loop as batching
from desktop.engine._batching.loop import Step
from desktop.engine._batching.slots import lookup_draft, next_draft_window
from desktop.engine._llama import LlamaEngine
from desktop.engine._llama_cpp import llama_cpp  # after the spin count, as the app
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message
from tests.engine.loop_gate import LoopGate, together, wait_for
from tests.near_tie import TokenStep, assert_same_answer, steps


def _bytes(tokens: list[int]) -> bytes:
    return struct.pack(f"<{len(tokens)}i", *tokens)


def test_lookup_proposes_what_followed_the_latest_match() -> None:
    history = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 6, 1, 2, 3]
    assert lookup_draft(_bytes(history), 3) == [7, 8, 6]  # the later of two matches
    assert lookup_draft(_bytes(history), 1) == [7]
    assert lookup_draft(_bytes([1, 2, 3, 4]), 4) == []  # no earlier occurrence
    assert lookup_draft(_bytes(history), 0) == []
    # A byte pattern straddling two tokens is not a token match.
    assert lookup_draft(_bytes([256, 0, 0, 1, 1, 5, 1, 1]), 2) == []


def test_lookup_prefers_the_longest_earlier_match() -> None:
    # The last 3 tokens (2 3 4) last occurred before 6, but all 4 (1 2 3 4) only before
    # 5: in repetitive code the longer match is the copy being made.
    history = [1, 2, 3, 4, 5, 9, 2, 3, 4, 6, 1, 2, 3, 4]
    assert lookup_draft(_bytes(history), 3) == [5, 9, 2]
    assert lookup_draft(_bytes(history), 3, ngram_max=3) == [6, 1, 2]
    # Below the shortest n-gram there is no guess.
    assert lookup_draft(_bytes([1, 2, 7, 1, 2]), 2) == []
    assert lookup_draft(_bytes([1, 2, 7, 1, 2]), 2, ngram=2) == [7, 1]


def test_draft_window_doubles_while_taken_and_falls_after_a_miss() -> None:
    assert next_draft_window(8, drafted=8, accepted=8, most=32) == 16
    assert next_draft_window(16, drafted=16, accepted=16, most=32) == 32
    assert next_draft_window(32, drafted=32, accepted=32, most=32) == 32  # capped
    assert next_draft_window(32, drafted=32, accepted=5, most=32) == 5  # what was taken
    assert next_draft_window(8, drafted=8, accepted=0, most=32) == 1  # never 0: it recovers
    assert next_draft_window(1, drafted=1, accepted=1, most=32) == 2
    assert next_draft_window(4, drafted=0, accepted=0, most=32) == 4  # no guess: no news


def _text(chunks: Iterator[Delta]) -> tuple[str, Delta]:
    got = list(chunks)
    return "".join(c.text for c in got), got[-1]


def _steps(chunks: Iterator[Delta]) -> tuple[list[TokenStep], Delta]:
    got = list(chunks)
    return steps(lp for c in got for lp in c.logprobs), got[-1]


CODE = "\n".join(f"def f{i}(x):\n    return x * {i} + {i * 7}\n" for i in range(12))


def _rewrite(engine: LlamaEngine, params: GenerationParams) -> tuple[str, Delta]:
    ask = [Message("user", f"Repeat this code exactly, then stop:\n\n{CODE}")]
    return _text(engine.stream_chat(ChatCall.of(ask, params)))


def test_tiny_model_greedy_answer_is_the_same_with_lookup(tiny_chat: Path) -> None:
    # The random-weight model's guesses are nearly all wrong: what this checks is that
    # rejected guesses leave no trace in the cache or the answer (the same answer up to
    # llama.cpp's rounding for another batch shape: tests/near_tie.py).
    params = GenerationParams(max_tokens=300, temperature=0.0, logprobs=2)
    prompt = "the the the the the the"
    answers = []
    for draft in (0, 8):
        engine = LlamaEngine(
            tiny_chat, LoadOptions(context_length=1024, parallel=2, lookup_draft=draft)
        )
        try:
            answers.append(_steps(engine.stream_completion(prompt, params)))
            stats = engine.stats()
        finally:
            engine.close()
    (plain, plain_final), (drafted, drafted_final) = answers
    agreed = assert_same_answer(plain, drafted, "lookup on")
    if agreed == len(plain):
        assert drafted_final.usage == plain_final.usage
    assert stats.draft_tokens > 0  # it really guessed (and was refused)


@pytest.mark.slow
def test_gemma_rewrites_the_same_code_in_fewer_steps_with_lookup(gemma_path: Path) -> None:
    params = GenerationParams(max_tokens=160, temperature=0.0, logprobs=2)
    ask = [Message("user", f"Repeat this code exactly, then stop:\n\n{CODE}")]
    results = []
    for draft in (0, 32):
        gate = LoopGate()
        engine = LlamaEngine(
            gemma_path,
            LoadOptions(context_length=4096, lookup_draft=draft),
            model_id="gemma",
            on_step=gate,
        )
        try:
            answer, final = _steps(engine.stream_chat(ChatCall.of(ask, params)))
            results.append((answer, final, len(gate.steps), engine.stats()))
        finally:
            engine.close()
    (plain, plain_final, plain_steps, _), (drafted, final, decodes, stats) = results
    # Greedy: the same answer with and without drafting, up to llama.cpp's rounding for
    # another batch shape (tests/near_tie.py). On an AVX-512 Xeon and on an AMD EPYC
    # (AVX2) "return x * 0 + 0" became "return x * 0" at its 23rd token, where " +" led
    # "\n\n" by 0.45 nats decoding one row and by 0.003 with the guesses beside it.
    agreed = assert_same_answer(plain, drafted, "lookup on")
    assert stats.draft_accepted > 0
    if agreed == len(plain):
        assert final.usage == plain_final.usage
        # It copies the file: nearly every guess is taken (the longest match finds the
        # function being copied; the last three tokens alone guessed 62% right), and the
        # answer takes a fraction of the decode steps.
        assert stats.draft_accepted >= 0.9 * stats.draft_tokens
        assert decodes * 4 < plain_steps
    else:  # it left the copy (f0 without "+ 0"): fewer guesses match what follows
        assert decodes * 2 < plain_steps, (decodes, plain_steps, stats)


@pytest.mark.slow
def test_two_streams_guess_nothing_and_a_lone_one_at_most_the_cap(
    gemma_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every guessed token holds a logits row of 262,144 floats, and beside another
    # stream it lengthens the step both wait for: guesses are a lone stream's, within
    # one cap (here 12, to reach it soon).
    monkeypatch.setattr(batching, "LOOKUP_ROWS_PER_STEP", 12)
    logits_rows: list[int] = []
    decode = llama_cpp.llama_decode

    def counting(ctx: llama_cpp.llama_context_p, batch: llama_cpp.llama_batch) -> int:
        logits_rows.append(sum(batch.logits[i] for i in range(batch.n_tokens)))
        return int(decode(ctx, batch))

    monkeypatch.setattr(llama_cpp, "llama_decode", counting)  # observes, then decodes
    gate = LoopGate()
    engine = LlamaEngine(
        gemma_path,
        LoadOptions(context_length=4096, parallel=2, lookup_draft=32),
        model_id="gemma",
        on_step=gate,
    )
    short = GenerationParams(max_tokens=20, temperature=0.0)
    long = GenerationParams(max_tokens=120, temperature=0.0)
    try:
        answers = together(
            engine, gate, [lambda: _rewrite(engine, short)[0], lambda: _rewrite(engine, long)[0]]
        )
        stats = engine.stats()
    finally:
        engine.close()
    assert all(answer.startswith("Repeat this code") for answer in answers)
    both = [step for step in gate.steps if step.generation_tokens >= 2]
    assert both and all(step.draft_tokens == 0 for step in both)
    assert stats.draft_accepted > 0  # the long one, once alone
    assert 2 < max(logits_rows) <= 1 + 12  # one sampled row plus at most 12 guesses


def _newcomer_beside_a_copy(gemma: Path, ask: str, n_batch: int | None = None) -> list[Step]:
    """The steps from a request's arrival (a stream copying code with lookup on beside
    it, guessing) to the end of both."""
    gate = LoopGate()
    engine = LlamaEngine(
        gemma,
        LoadOptions(context_length=4096, parallel=2, lookup_draft=32, n_batch=n_batch),
        model_id="gemma",
        on_step=gate,
    )
    try:
        copying = threading.Thread(
            target=_rewrite, args=(engine, GenerationParams(max_tokens=200, temperature=0.0))
        )
        copying.start()
        wait_for(lambda: any(step.draft_tokens for step in gate.steps))  # it is guessing
        gate.hold()
        wait_for(gate.held.is_set)
        chunks = engine.stream_chat(
            ChatCall.of([Message("user", ask)], GenerationParams(max_tokens=6))
        )
        newcomer = threading.Thread(target=_text, args=(chunks,))
        newcomer.start()
        wait_for(lambda: engine.stats().requests_waiting == 1)
        seen = len(gate.steps)
        gate.release()
        newcomer.join()
        copying.join()
    finally:
        gate.release()
        engine.close()
    after = gate.steps[seen:]
    reading = [step for step in after if step.prompt_tokens]
    assert reading and all(step.generation_tokens == 1 for step in reading)  # beside the copy
    last_read = max(i for i, step in enumerate(after) if step.prompt_tokens)
    assert any(step.draft_tokens for step in after[last_read + 1 :])  # then guessing again
    return reading


@pytest.mark.slow
def test_a_step_that_reads_a_short_prompt_guesses_nothing(gemma_path: Path) -> None:
    # The newcomer's first token waits for the step that reads its prompt, and every
    # guess decoded there is one more logits row of 262,144 floats: with 3 streams
    # copying beside it (32 guesses), a 33-token prompt's step took 3-4x as long.
    reading = _newcomer_beside_a_copy(gemma_path, "Say hello.")
    assert sum(step.prompt_tokens for step in reading) < batching.PROMPT_TOKENS_PER_GUESS
    assert all(step.draft_tokens == 0 for step in reading)


@pytest.mark.slow
def test_a_long_prompt_read_in_chunks_leaves_the_copy_a_few_guesses(gemma_path: Path) -> None:
    # Beside a chunk of hundreds of tokens a guess costs little, and the stream keeps
    # copying several tokens per step while the long prompt is read.
    reading = _newcomer_beside_a_copy(gemma_path, f"Summarize this code:\n\n{CODE * 3}", 256)
    assert len(reading) >= 2  # read in chunks
    per_guess = batching.PROMPT_TOKENS_PER_GUESS
    assert all(step.draft_tokens <= step.prompt_tokens // per_guess for step in reading)
    assert sum(step.draft_tokens for step in reading) > 0, reading
