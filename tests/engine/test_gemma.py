"""The real Gemma 3 270M model: real tokenizer, determinism, parity with llama-cpp-python,
and the slot engine on a real sliding-window (SWA) model."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from desktop.engine._llama import LlamaEngine
from desktop.engine._llama_cpp import llama_cpp  # after the spin count, as the app
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message
from tests.benchmarks.bench_vs_llama_server import _system_prompt
from tests.engine.loop_gate import LoopGate, together
from tests.near_tie import TokenStep, assert_same_answer, steps, steps_of_completion

pytestmark = pytest.mark.slow
PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def gate() -> LoopGate:
    return LoopGate()


@pytest.fixture(scope="module")
def gemma(gemma_path: Path, gate: LoopGate) -> LlamaEngine:
    return LlamaEngine(gemma_path, LoadOptions(context_length=2048), model_id="gemma", on_step=gate)


def _answer(
    engine: LlamaEngine, messages: list[Message], params: GenerationParams
) -> tuple[str, Delta]:
    chunks = list(engine.stream_chat(ChatCall.of(messages, params)))
    return "".join(c.text for c in chunks), chunks[-1]


def _completion_steps(engine: LlamaEngine, prompt: str, max_tokens: int) -> list[TokenStep]:
    params = GenerationParams(max_tokens=max_tokens, temperature=0.0, logprobs=2)
    return steps(lp for c in engine.stream_completion(prompt, params) for lp in c.logprobs)


def test_greedy_completion_is_deterministic_and_sensible(gemma: LlamaEngine) -> None:
    first = _completion_steps(gemma, PROMPT, 8)
    # The second time the prompt is cached but for its last token, decoded alone: the
    # same answer up to llama.cpp's rounding for that batch shape (tests/near_tie.py).
    assert_same_answer(first, _completion_steps(gemma, PROMPT, 8), "prompt cached")
    assert len("".join(s.token for s in first).split()) >= 3  # real words, real tokenizer


def test_architecture_template_used_for_chat(gemma: LlamaEngine) -> None:
    assert gemma.template().source in {"gguf", "architecture:gemma3"}
    prompt = gemma.render(ChatCall.of([Message("user", "Hi")]))
    assert "<start_of_turn>user" in prompt and prompt.endswith("<start_of_turn>model\n")
    chunks = list(
        gemma.stream_chat(ChatCall.of([Message("user", "Hi")], GenerationParams(max_tokens=5)))
    )
    assert chunks[-1].usage.completion_tokens <= 5


def test_edgedesk_run_raw_matches_llama_cpp_python(gemma_path: Path, tmp_path: Path) -> None:
    direct = llama_cpp.Llama(str(gemma_path), n_ctx=1024, verbose=False, logits_all=True)
    expected = direct.create_completion(PROMPT, max_tokens=24, temperature=0.0, logprobs=2)
    direct.close()
    env = {**os.environ, "EDGEDESK_HOME": str(tmp_path)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop",
            "run",
            str(gemma_path),
            PROMPT,
            "--raw",
            "--max-tokens",
            "24",
            "--temperature",
            "0",
            "--ctx",
            "1024",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("\n")
    # Another process with its own batch plan (and Gemma's prompt-lookup guesses): the
    # same answer up to llama.cpp's rounding (tests/near_tie.py).
    reference = steps_of_completion(expected["choices"][0]["logprobs"])
    assert "".join(s.token for s in reference) == expected["choices"][0]["text"]
    assert_same_answer(reference, result.stdout[:-1], "edgedesk run")


def _greedy_steps(engine: LlamaEngine, question: str) -> list[TokenStep]:
    params = GenerationParams(max_tokens=16, temperature=0.0, logprobs=2)
    return steps(
        lp
        for c in engine.stream_chat(ChatCall.of([Message("user", question)], params))
        for lp in c.logprobs
    )


def test_greedy_answers_are_the_same_alone_and_beside_three_others(
    gemma: LlamaEngine, gate: LoopGate
) -> None:
    questions = [
        "Name a colour.",
        "What is two plus two?",
        "Say hello in French.",
        "Name a planet.",
    ]
    solo = [_greedy_steps(gemma, q) for q in questions]
    first = len(gate.steps)
    batched = together(gemma, gate, [lambda q=q: _greedy_steps(gemma, q) for q in questions])
    assert max(s.generation_tokens for s in gate.steps[first:]) == 4
    # Batched, the same answers up to llama.cpp's rounding for the batch shape (on an
    # AVX-512 machine "Name a colour." flipped at a 0.13-nat tie): tests/near_tie.py.
    for question, alone, beside in zip(questions, solo, batched, strict=True):
        assert_same_answer(alone, beside, question)
    # and not by leniency: another question's answer is not this one's.
    with pytest.raises(AssertionError, match="not the same answer"):
        assert_same_answer(solo[1], batched[3], "mixed up")


def test_next_turn_after_a_prompt_longer_than_the_window_reuses_it(gemma: LlamaEngine) -> None:
    # Gemma 3's sliding window is 512 tokens and the engine keeps no full-size SWA cache;
    # a chat's next turn continues at the end of the slot, so its prefix stays usable.
    system = " ".join(f"Rule {i}: answer briefly and politely." for i in range(120))
    turn1 = [Message("system", system), Message("user", "Name a colour.")]
    params = GenerationParams(max_tokens=8, temperature=0.0)
    answer, first = _answer(gemma, turn1, params)
    assert first.usage is not None and first.usage.prompt_tokens > 1000
    before = gemma.stats()
    turn2 = [*turn1, Message("assistant", answer), Message("user", "Another one.")]
    _, second = _answer(gemma, turn2, params)
    assert second.usage is not None
    assert second.usage.cached_tokens >= first.usage.prompt_tokens
    processed = gemma.stats().prompt_tokens_processed - before.prompt_tokens_processed
    assert processed == second.usage.prompt_tokens - second.usage.cached_tokens < 40


def test_a_chat_pushed_out_of_the_only_slot_comes_back_from_ram_unchanged(
    gemma_path: Path, gemma: LlamaEngine
) -> None:
    one_slot = LlamaEngine(gemma_path, LoadOptions(context_length=2048, parallel=1))
    try:
        params = GenerationParams(max_tokens=8, temperature=0.0)
        turn1 = [
            Message("system", " ".join(f"Rule {i}: be brief." for i in range(40))),
            Message("user", "Name a colour."),
        ]
        answer, first = _answer(one_slot, turn1, params)
        _answer(one_slot, [Message("user", "Something else entirely.")], params)
        turn2 = [*turn1, Message("assistant", answer), Message("user", "Another.")]
        params = GenerationParams(max_tokens=8, temperature=0.0, logprobs=2)
        chunks = list(one_slot.stream_chat(ChatCall.of(turn2, params)))
        second = chunks[-1]
        assert first.usage is not None and second.usage is not None
        assert second.usage.cached_tokens >= first.usage.prompt_tokens  # restored, not redone
        # and the restored state is right: the answer another engine computes whole (up to
        # llama.cpp's rounding for other batch shapes: tests/near_tie.py).
        fresh = list(gemma.stream_chat(ChatCall.of(turn2, params)))
        assert_same_answer(
            steps(lp for c in fresh for lp in c.logprobs),
            steps(lp for c in chunks for lp in c.logprobs),
            "restored from RAM",
        )
    finally:
        one_slot.close()


def test_interleaved_chats_keep_their_prefix_after_a_burst(gemma_path: Path) -> None:
    # A sliding-window model in a unified cache lost a chat's cells outside its window to
    # the other chat's decode, so every follow-up re-read its prompt (0.06 s -> 2.5 s).
    engine = LlamaEngine(gemma_path, LoadOptions(context_length=8192), model_id="gemma")
    try:
        params = GenerationParams(max_tokens=96, temperature=0.0)
        burst = [
            threading.Thread(
                target=_answer,
                args=(engine, [Message("user", f"Write a story number {i}.")], params),
            )
            for i in range(8)
        ]
        for thread in burst:
            thread.start()
        for thread in burst:
            thread.join()
        talks = {k: [Message("system", _system_prompt(f"{k}-team", tokens=2000))] for k in "AB"}
        firsts = {}
        for turn, question in enumerate(["What about backups?", "And passwords?"]):
            for key, talk in talks.items():
                talk.append(Message("user", question))
                text, last = _answer(engine, talk, params)
                talk.append(Message("assistant", text))
                assert last.usage is not None
                if turn == 0:
                    firsts[key] = last.usage.prompt_tokens
                else:  # the whole first turn is reused, not re-read
                    assert last.usage.cached_tokens >= firsts[key], (key, last.usage)
    finally:
        engine.close()
