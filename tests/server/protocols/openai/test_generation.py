"""Fill-in-the-middle, logprobs, forced tool calls and streaming with tools, end to end.

A real server over the tiny chat model and a tiny model that carries FIM tokens,
driven by the official openai client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest

from desktop.engine._loader import load_engine
from tests.fixtures.tiny_gguf import FIM_TOKENS, write_tiny_llama
from tests.near_tie import assert_same_answer, steps, steps_of_completion
from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello world"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}},
                "required": ["unit"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {
                "type": "object",
                "properties": {"zone": {"enum": ["utc", "local"]}},
                "required": ["zone"],
                "additionalProperties": False,
            },
        },
    },
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path) -> Iterator[Served]:
    """A server offering the tiny chat model (no FIM tokens) and a FIM-capable one."""
    fim = write_tiny_llama(tmp_path_factory.mktemp("fim") / "tiny-fim.gguf", fim=True, seed=7)
    with serve(tmp_path_factory.mktemp("srv"), [tiny_chat, fim]) as server:
        yield server


@pytest.fixture
def client(served: Served) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=served.url, api_key=served.key, max_retries=0, timeout=60) as c:
        yield c


# ---------------------------------------------------------------- fill-in-the-middle


@contextmanager
def _fim_engine(served: Served) -> Iterator[Any]:
    """The FIM model loaded in this process: its prompt builder is no API the server's
    worker answers, so the expected prompt is built here from the same file."""
    engine = load_engine(served.ctx.resolver("tiny-fim"))
    try:
        yield engine
    finally:
        engine.close()


def test_fim_prompt_is_prefix_suffix_middle_in_the_models_own_tokens(served: Served) -> None:
    prefix, suffix = "def add(a, b):", "return the cat"
    with _fim_engine(served) as engine:
        tokens = engine.infill_tokens(prefix, suffix)
        pre_text = engine.tokenize(prefix, add_bos=False, special=False)
        suf_text = engine.tokenize(suffix, add_bos=False, special=False)
    pre, suf, mid = 310, 311, 312  # where the fixture put FIM_TOKENS in the vocabulary
    assert len(FIM_TOKENS) == 3
    assert tokens == [1, pre, *pre_text, suf, *suf_text, mid]  # 1 is <s> (BOS)


def test_fim_completion_returns_text_streamed_or_whole(
    client: openai.OpenAI, served: Served
) -> None:
    prefix, suffix = "def add(a, b):", "return the cat"
    with _fim_engine(served) as engine:
        expected = len(engine.infill_tokens(prefix, suffix))
    whole = client.completions.create(
        model="tiny-fim", prompt=prefix, suffix=suffix, max_tokens=8, temperature=0, logprobs=2
    )
    assert whole.choices[0].text
    assert whole.usage.prompt_tokens == expected  # the FIM prompt, not the prefix alone
    plain = client.completions.create(model="tiny-fim", prompt=prefix, max_tokens=8, temperature=0)
    assert plain.usage.prompt_tokens < expected
    streamed = client.completions.create(
        model="tiny-fim", prompt=prefix, suffix=suffix, max_tokens=8, temperature=0, stream=True
    )
    # Another request: the same answer up to llama.cpp's rounding for the prompt found
    # cached (tests/near_tie.py).
    reference = steps_of_completion(whole.choices[0].logprobs)
    text = "".join(c.choices[0].text for c in streamed if c.choices)
    assert_same_answer(reference, text, "streamed FIM")


def test_suffix_is_refused_for_a_model_without_fim_tokens(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        client.completions.create(model="tiny-chat", prompt="a", suffix="b", max_tokens=2)
    body = err.value.body
    assert isinstance(body, dict) and body["param"] == "suffix"
    assert "fill-in-the-middle" in body["message"]


# ---------------------------------------------------------------- logprobs


def test_chat_logprobs_with_top_alternatives(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="tiny-chat", messages=HI, max_tokens=6, temperature=0, logprobs=True, top_logprobs=3
    )
    content = reply.choices[0].logprobs.content
    assert len(content) == reply.usage.completion_tokens == 6
    assert "".join(t.token for t in content) == reply.choices[0].message.content
    for token in content:
        assert token.logprob <= 0
        assert len(token.top_logprobs) == 3
        values = [t.logprob for t in token.top_logprobs]
        assert values == sorted(values, reverse=True)
        # Greedy sampling takes the most likely token.
        assert (token.top_logprobs[0].token, values[0]) == (token.token, token.logprob)
    plain = client.chat.completions.create(
        model="tiny-chat", messages=HI, max_tokens=6, temperature=0
    )
    assert plain.choices[0].logprobs is None
    # The answer without logprobs is the same, up to llama.cpp's rounding for the prompt
    # found cached (tests/near_tie.py).
    assert_same_answer(steps(content), plain.choices[0].message.content, "no logprobs")


def test_streamed_chat_and_completion_logprobs(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="tiny-chat",
            messages=HI,
            max_tokens=5,
            temperature=0.9,
            seed=2,
            logprobs=True,
            top_logprobs=1,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    tokens = [
        t
        for c in chunks
        if c.choices and c.choices[0].logprobs
        for t in c.choices[0].logprobs.content
    ]
    assert len(tokens) == chunks[-1].usage.completion_tokens == 5
    assert all(t.logprob <= 0 and len(t.top_logprobs) == 1 for t in tokens)
    legacy = client.completions.create(
        model="tiny-chat", prompt="hello the", max_tokens=5, temperature=0, logprobs=2
    )
    lp = legacy.choices[0].logprobs
    assert "".join(lp.tokens) == legacy.choices[0].text
    assert all(v <= 0 for v in lp.token_logprobs) and len(lp.token_logprobs) == 5
    assert all(len(top) == 2 for top in lp.top_logprobs)
    assert lp.text_offset[0] == 0


# ---------------------------------------------------------------- tools


def test_required_tool_choice_forces_a_valid_call(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="tiny-chat",
        messages=HI,
        max_tokens=200,
        temperature=0.8,
        seed=4,
        tools=TOOLS,
        tool_choice="required",
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    arguments = json.loads(call.function.arguments)
    assert (call.function.name, arguments) in [
        ("get_weather", {"unit": "celsius"}),
        ("get_weather", {"unit": "fahrenheit"}),
        ("get_time", {"zone": "utc"}),
        ("get_time", {"zone": "local"}),
    ]


def test_named_tool_choice_forces_that_call_when_streamed(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="tiny-chat",
            messages=HI,
            max_tokens=200,
            temperature=0.8,
            seed=9,
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "get_time"}},
            stream=True,
        )
    )
    calls = [
        tc
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
        for tc in c.choices[0].delta.tool_calls
    ]
    assert [c.function.name for c in calls] == ["get_time"]
    assert json.loads(calls[0].function.arguments)["zone"] in ("utc", "local")
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_words_stream_while_tools_are_offered(client: openai.OpenAI) -> None:
    whole = client.chat.completions.create(
        model="tiny-chat",
        messages=HI,
        max_tokens=12,
        temperature=0,
        tools=TOOLS,
        logprobs=True,
        top_logprobs=2,
    )
    text = whole.choices[0].message.content
    assert text and not whole.choices[0].message.tool_calls
    pieces = [
        c.choices[0].delta.content
        for c in client.chat.completions.create(
            model="tiny-chat", messages=HI, max_tokens=12, temperature=0, tools=TOOLS, stream=True
        )
        if c.choices and c.choices[0].delta.content
    ]
    # Another request: the same answer up to llama.cpp's rounding for the prompt found
    # cached (tests/near_tie.py).
    assert_same_answer(steps(whole.choices[0].logprobs.content), "".join(pieces), "streamed")
    assert len(pieces) > 3  # sent as it came, not held until the end
