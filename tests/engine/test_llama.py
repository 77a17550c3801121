"""The engine against real llama.cpp with tiny random-weight GGUFs."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.base.errors import ContextOverflow, InvalidRequest, ModelLoadError, TemplateMissing
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ADMITTED, ChatCall, GenerationParams, Message
from tests.near_tie import TokenStep, assert_same_answer, steps

GREEDY = GenerationParams(max_tokens=16, temperature=0.0, seed=7)


@pytest.fixture(scope="module")
def chat_engine(tiny_chat: Path) -> Iterator[LlamaEngine]:
    # Closed at the module's end: its decode loop and llama.cpp memory would otherwise
    # live on through the rest of the session, until garbage collection.
    engine = LlamaEngine(tiny_chat, LoadOptions(context_length=512), model_id="tiny")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def embed_engine(tiny_embed: Path) -> Iterator[LlamaEngine]:
    engine = LlamaEngine(tiny_embed, LoadOptions(context_length=128, embedding=True))
    yield engine
    engine.close()


def _answer(engine: LlamaEngine, messages: list[Message], params: GenerationParams = GREEDY):
    chunks = list(engine.stream_chat(ChatCall.of(messages, params)))
    return "".join(c.text for c in chunks), chunks


def test_streams_many_chunks_then_one_final_chunk(chat_engine: LlamaEngine) -> None:
    text, chunks = _answer(chat_engine, [Message("user", "hello world")])
    assert len(chunks) > 3
    assert [c.is_final for c in chunks].count(True) == 1 and chunks[-1].is_final
    final = chunks[-1]
    assert final.finish_reason == "length"
    assert final.usage is not None and final.usage.completion_tokens == 16
    assert final.usage.prompt_tokens == len(
        chat_engine.prompt_tokens(chat_engine.render(ChatCall.of([Message("user", "hello world")])))
    )
    assert text


def test_greedy_generation_is_deterministic(chat_engine: LlamaEngine) -> None:
    params = GenerationParams(max_tokens=16, temperature=0.0, seed=7, logprobs=2)

    def greedy() -> list[TokenStep]:
        _, chunks = _answer(chat_engine, [Message("user", "the cat")], params)
        return steps(lp for c in chunks for lp in c.logprobs)

    first = greedy()
    _answer(chat_engine, [Message("user", "something else entirely")])
    # The second time its prompt comes back from the cache: the same answer up to
    # llama.cpp's rounding for another batch shape (tests/near_tie.py).
    assert_same_answer(first, greedy(), "asked again")


def test_cancel_stops_within_one_token(chat_engine: LlamaEngine) -> None:
    cancel = threading.Event()
    params = GenerationParams(max_tokens=200, temperature=0.7, seed=1)
    seen = 0
    final = None
    for chunk in chat_engine.stream_chat(ChatCall.of([Message("user", "tell me")], params), cancel):
        if chunk.is_final:
            final = chunk
            break
        seen += 1
        if seen == 3:
            cancel.set()
    assert final is not None and final.finish_reason == "cancelled"
    assert final.usage is not None and final.usage.completion_tokens <= 4


def test_stop_strings_end_the_answer(chat_engine: LlamaEngine) -> None:
    params = GenerationParams(max_tokens=40, temperature=0.0, logprobs=2)
    text, first = _answer(chat_engine, [Message("user", "hello")], params)
    assert len(text) > 2
    stop = text[1:3]
    stopped, chunks = _answer(
        chat_engine,
        [Message("user", "hello")],
        GenerationParams(max_tokens=40, temperature=0.0, stop=(stop,)),
    )
    assert stop not in stopped
    # Asked again, the answer is the same up to llama.cpp's rounding for the prompt found
    # cached (tests/near_tie.py); where it is, the stop string ends it there.
    answer = steps(lp for c in first for lp in c.logprobs)
    assert_same_answer(answer, stopped, "with a stop string", cut=True)
    if stopped == text[: text.find(stop)]:
        assert chunks[-1].finish_reason == "stop" and chunks[-1].stop_sequence == stop


def test_prefix_of_a_conversation_is_reused_across_turns(chat_engine: LlamaEngine) -> None:
    turn1 = [Message("system", "be brief"), Message("user", "hello world the cat")]
    answer, chunks = _answer(chat_engine, turn1)
    first_prompt = chunks[-1].usage.prompt_tokens
    before = chat_engine.evaluated_tokens
    turn2 = [*turn1, Message("assistant", answer), Message("user", "and the dog")]
    _, chunks2 = _answer(chat_engine, turn2)
    usage = chunks2[-1].usage
    evaluated_prompt = usage.prompt_tokens - usage.cached_tokens
    assert usage.cached_tokens >= first_prompt - 1
    assert evaluated_prompt < usage.prompt_tokens / 2
    assert chat_engine.evaluated_tokens - before < usage.prompt_tokens


def test_switching_back_to_a_conversation_restores_its_state(chat_engine: LlamaEngine) -> None:
    conv_a = [Message("user", "hello world this is conversation a with a long enough prompt")]
    answer_a, chunks_a = _answer(chat_engine, conv_a)
    prompt_a = chunks_a[-1].usage.prompt_tokens
    _, chunks_b = _answer(chat_engine, [Message("user", "a completely different conversation b")])
    shared_with_b = chunks_b[-1].usage.cached_tokens  # only the template's opening tokens
    assert shared_with_b < prompt_a / 3
    follow = [*conv_a, Message("assistant", answer_a), Message("user", "more")]
    _, chunks = _answer(chat_engine, follow)
    # Conversation A's whole first prompt comes back from the saved state, not recomputed.
    assert chunks[-1].usage.cached_tokens >= prompt_a - 1


def test_prompt_larger_than_context_is_refused_with_numbers(tiny_chat: Path) -> None:
    engine = LlamaEngine(tiny_chat, LoadOptions(context_length=64, state_cache_bytes=0))
    limit = engine.context_length
    with pytest.raises(
        ContextOverflow, match=rf"prompt is \d+ tokens but the model.s context is {limit}"
    ):
        list(engine.stream_chat(ChatCall.of([Message("user", "hello world " * 200)], GREEDY)))


def test_a_stream_says_admitted_after_its_checks_and_before_its_first_token(
    chat_engine: LlamaEngine,
) -> None:
    """Refusals raise before ``ADMITTED``; after it the prompt is read, then the words."""
    too_long = chat_engine.stream_chat(ChatCall.of([Message("user", "hello world " * 400)], GREEDY))
    with pytest.raises(ContextOverflow):
        next(too_long)
    bad_limit = GenerationParams(max_tokens=0)
    with pytest.raises(InvalidRequest, match="max_tokens"):
        next(chat_engine.stream_chat(ChatCall.of([Message("user", "hi")], bad_limit)))
    before = chat_engine.stats().tokens_decoded
    stream = chat_engine.stream_chat(ChatCall.of([Message("user", "admitted?")], GREEDY))
    assert next(stream) is ADMITTED
    assert chat_engine.stats().tokens_decoded == before  # nothing of it decoded yet
    rest = list(stream)
    assert not any(chunk.admitted for chunk in rest)
    assert rest[-1].usage is not None and rest[-1].usage.completion_tokens > 0


def test_model_without_template_is_refused_with_instructions(tiny_chat_no_template: Path) -> None:
    engine = LlamaEngine(tiny_chat_no_template, LoadOptions(context_length=256))
    with pytest.raises(TemplateMissing, match="no chat template.*models.toml") as refused:
        list(engine.stream_chat(ChatCall.of([Message("user", "hi")], GREEDY)))
    # Said to every caller (the window, the HTTP API): no flag of one command in it.
    assert "--raw" not in refused.value.message
    # Plain completion still works: the refusal is about chat format only.
    chunks = list(engine.stream_completion("hello", GREEDY))
    assert chunks[-1].usage.completion_tokens == 16


def test_catalog_template_is_used_when_gguf_has_none(tiny_chat_no_template: Path) -> None:
    engine = LlamaEngine(
        tiny_chat_no_template,
        LoadOptions(context_length=256),
        chat_template="{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}"
        "{% endfor %}[assistant]",
    )
    assert engine.template().source == "catalog"
    assert engine.render(ChatCall.of([Message("user", "hi")])) == "[user]hi[assistant]"
    assert list(engine.stream_chat(ChatCall.of([Message("user", "hi")], GREEDY)))[-1].finish_reason


def test_embeddings_are_unit_length_and_batched(embed_engine: LlamaEngine) -> None:
    before = embed_engine.embed_decodes
    texts = ["hello world", "the cat is a dog", "你好世界", "model chat desk"]
    vectors = embed_engine.embed(texts)
    assert embed_engine.embed_decodes - before == 1  # all four in one decode call
    assert len(vectors) == 4 and len(vectors[0]) == embed_engine.embedding_dim()
    for vector in vectors:
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-5)
    single = embed_engine.embed(["the cat is a dog"])[0]
    assert sum(a * b for a, b in zip(single, vectors[1], strict=True)) > 0.9999


def test_long_text_is_windowed_and_pooled_not_truncated(embed_engine: LlamaEngine) -> None:
    head = "hello world " * 60  # > 128 tokens on its own
    text_a = head + "the cat " * 60
    text_b = head + "你好 " * 60
    a, b = embed_engine.embed([text_a, text_b])
    # Truncation to the first window would make the two identical.
    assert sum(x * y for x, y in zip(a, b, strict=True)) < 0.999
    assert math.isclose(math.sqrt(sum(x * x for x in a)), 1.0, rel_tol=1e-5)


def test_not_a_gguf_fails_to_load_with_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(ModelLoadError, match="could not load bogus.gguf"):
        LlamaEngine(bogus, LoadOptions(context_length=128))
