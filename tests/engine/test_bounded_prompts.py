"""Refusing a prompt far over the context costs about a context's worth of tokenizing,
and token ids are embedded as given (the tiny models, in process)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.base.errors import ContextOverflow, InvalidRequest
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._overlong import PIECE_CHARS
from desktop.engine._types import ChatCall, GenerationParams, Message

CONTEXT = 512


@pytest.fixture(scope="module")
def chat_engine(tiny_chat: Path) -> Iterator[LlamaEngine]:
    engine = LlamaEngine(tiny_chat, LoadOptions(context_length=CONTEXT), model_id="tiny")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def embed_engine(tiny_embed: Path) -> Iterator[LlamaEngine]:
    engine = LlamaEngine(tiny_embed, LoadOptions(context_length=128, embedding=True))
    yield engine
    engine.close()


@pytest.fixture
def tokenized(chat_engine: LlamaEngine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every text ``chat_engine`` tokenizes while the test runs."""
    seen: list[int] = []
    real = chat_engine.tokenize

    def counting(text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        seen.append(len(text))
        return real(text, add_bos=add_bos, special=special)

    monkeypatch.setattr(chat_engine, "tokenize", counting)
    return seen


PARAMS = GenerationParams(max_tokens=2, temperature=0.0)
HUGE = "lorem ipsum dolor sit amet\n" * 80_000  # 2.1 MB: thousands of times the context


def test_a_chat_far_over_the_context_is_refused_after_a_piece(
    chat_engine: LlamaEngine, tokenized: list[int]
) -> None:
    call = ChatCall(messages=(Message("user", HUGE),), params=PARAMS)
    with pytest.raises(ContextOverflow) as caught:
        next(chat_engine.stream_chat(call))
    assert f"the model's context is {CONTEXT}" in caught.value.message
    assert caught.value.prompt_tokens >= CONTEXT  # a sound lower bound
    # One piece was tokenized, not the 2 MB.
    assert sum(tokenized) <= 2 * PIECE_CHARS < len(HUGE) // 50
    # The size it names is the whole prompt's, to within a tenth, not the piece's.
    whole = len(chat_engine.tokenize(HUGE, add_bos=True, special=False))
    about = int(caught.value.params["size"].replace(",", ""))
    assert abs(about - whole) <= whole / 10, (about, whole)
    assert f"the prompt is about {caught.value.params['size']} tokens" in caught.value.message
    assert caught.value.kind == "prompt_far_too_long"


def test_a_completion_far_over_the_context_is_refused_after_a_piece(
    chat_engine: LlamaEngine, tokenized: list[int]
) -> None:
    with pytest.raises(ContextOverflow):
        next(chat_engine.stream_completion(HUGE, PARAMS))
    assert sum(tokenized) <= 2 * PIECE_CHARS


def test_a_prompt_just_over_the_context_is_counted_exactly(
    chat_engine: LlamaEngine, tokenized: list[int]
) -> None:
    prompt = "ab " * 400  # short: one whole count, the exact number in the message
    exact = len(chat_engine.tokenize(prompt, add_bos=True, special=False))
    assert exact >= CONTEXT
    with pytest.raises(ContextOverflow) as caught:
        next(chat_engine.stream_completion(prompt, PARAMS))
    assert f"the prompt is {exact} tokens" in caught.value.message
    assert caught.value.kind == "prompt_too_long"
    assert caught.value.params["size"] == f"{exact:,}"


def test_a_prompt_within_the_context_still_generates(chat_engine: LlamaEngine) -> None:
    chunks = list(chat_engine.stream_completion("ab " * 20, PARAMS))
    assert chunks[-1].finish_reason == "length"


def test_token_ids_are_embedded_as_given(embed_engine: LlamaEngine) -> None:
    ids = embed_engine.tokenize("hello world", add_bos=True, special=False)
    from_ids, from_text = embed_engine.embed([ids, "hello world"])
    assert from_ids == pytest.approx(from_text, abs=1e-5)
    with pytest.raises(InvalidRequest) as caught:
        embed_engine.embed([[1, 10**9]])
    assert caught.value.param == "input" and "1000000000" in caught.value.message
