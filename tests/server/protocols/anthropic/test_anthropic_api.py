"""``/v1/messages`` end to end: a real server over the tiny models, the official anthropic client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from tests.near_tie import assert_same_answer, steps
from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello world"}]
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather",
        "input_schema": {
            "type": "object",
            "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["unit"],
            "additionalProperties": False,
        },
    },
    {
        "name": "get_time",
        "input_schema": {
            "type": "object",
            "properties": {"zone": {"enum": ["utc", "local"]}},
            "required": ["zone"],
            "additionalProperties": False,
        },
    },
]


@pytest.fixture
def claude(server: Served) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=server.root, api_key=server.key, max_retries=0, timeout=60
    ) as c:
        yield c


def test_create_matches_the_chat_route(claude: anthropic.Anthropic, client: openai.OpenAI) -> None:
    # Anthropic's 2026 client no longer has temperature; it still reaches us as a field.
    reply = claude.messages.create(
        model="tiny-chat",
        max_tokens=6,
        messages=HI,
        system="Be brief.",
        extra_body={"temperature": 0},
    )
    chat = client.chat.completions.create(
        model="tiny-chat",
        temperature=0,
        max_tokens=6,
        messages=[{"role": "system", "content": "Be brief."}, *HI],
        logprobs=True,
        top_logprobs=2,
    )
    assert reply.type == "message" and reply.role == "assistant"
    assert [b.type for b in reply.content] == ["text"]
    # The chat route's answer, up to llama.cpp's rounding for the prompt found cached.
    assert_same_answer(steps(chat.choices[0].logprobs.content), reply.content[0].text)
    assert reply.stop_reason == "max_tokens"
    assert (
        reply.usage.input_tokens + reply.usage.cache_read_input_tokens == chat.usage.prompt_tokens
    )
    assert reply.usage.output_tokens == 6


def test_stream_gives_the_same_text_and_event_order(
    claude: anthropic.Anthropic, client: openai.OpenAI
) -> None:
    zero = {"temperature": 0}
    whole = claude.messages.create(model="tiny-chat", max_tokens=12, messages=HI, extra_body=zero)
    with claude.messages.stream(
        model="tiny-chat", max_tokens=12, messages=HI, extra_body=zero
    ) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    chat = client.chat.completions.create(
        model="tiny-chat", temperature=0, max_tokens=12, messages=HI, logprobs=True, top_logprobs=2
    )
    # One answer up to llama.cpp's rounding for the prompt found cached (near_tie.py).
    reference = steps(chat.choices[0].logprobs.content)
    assert len(pieces) > 3
    assert_same_answer(reference, "".join(pieces), "streamed")
    assert_same_answer(reference, whole.content[0].text, "whole")
    assert final.content[0].text == "".join(pieces)
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 12


def test_raw_stream_has_pings_and_named_events(server: Served) -> None:
    # The client drops pings, so read the wire itself.
    reply = httpx.post(
        f"{server.root}/v1/messages",
        headers={"x-api-key": server.key},
        json={"model": "tiny-chat", "max_tokens": 3, "messages": HI, "stream": True},
    )
    assert reply.headers["content-type"].startswith("text/event-stream")
    names = [
        line.removeprefix("event: ")
        for line in reply.text.splitlines()
        if line.startswith("event: ")
    ]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]


def test_forced_tool_use_and_the_result_sent_back(claude: anthropic.Anthropic) -> None:
    reply = claude.messages.create(
        model="tiny-chat", max_tokens=200, messages=HI, tools=TOOLS, tool_choice={"type": "any"}
    )
    [use] = [b for b in reply.content if b.type == "tool_use"]
    assert reply.stop_reason == "tool_use"
    assert (use.name, use.input) in [
        ("get_weather", {"unit": "celsius"}),
        ("get_weather", {"unit": "fahrenheit"}),
        ("get_time", {"zone": "utc"}),
        ("get_time", {"zone": "local"}),
    ]
    with claude.messages.stream(
        model="tiny-chat",
        max_tokens=200,
        messages=HI,
        tools=TOOLS,
        tool_choice={"type": "tool", "name": "get_time"},
    ) as stream:
        final = stream.get_final_message()
    assert [(b.type, b.name) for b in final.content] == [("tool_use", "get_time")]
    assert final.content[0].input["zone"] in ("utc", "local")
    follow = claude.messages.create(
        model="tiny-chat",
        max_tokens=2,
        tools=TOOLS,
        messages=[
            *HI,
            {"role": "assistant", "content": reply.content},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": use.id, "content": "21 degrees"}
                ],
            },
        ],
    )

    def prompt(usage: anthropic.types.Usage) -> int:
        return usage.input_tokens + (usage.cache_read_input_tokens or 0)

    # The call and its result are part of the next prompt, most of it a reused KV prefix.
    assert prompt(follow.usage) > prompt(reply.usage) + 5
    assert follow.usage.cache_read_input_tokens > 0


def test_structured_output_follows_the_schema(claude: anthropic.Anthropic) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"enum": ["yes", "no"]}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    reply = claude.messages.create(
        model="tiny-chat",
        max_tokens=200,
        messages=HI,
        output_config={"format": {"type": "json_schema", "schema": schema}},
    )
    assert json.loads(reply.content[0].text)["answer"] in ("yes", "no")


def test_count_tokens_is_the_prompt_the_model_reads(claude: anthropic.Anthropic) -> None:
    counted = claude.messages.count_tokens(model="tiny-chat", messages=HI, system="Be brief.")
    reply = claude.messages.create(model="tiny-chat", max_tokens=1, messages=HI, system="Be brief.")
    assert counted.input_tokens == reply.usage.input_tokens + reply.usage.cache_read_input_tokens
    with_tools = claude.messages.count_tokens(model="tiny-chat", messages=HI, tools=TOOLS)
    assert with_tools.input_tokens > counted.input_tokens + 10


def test_count_tokens_refuses_text_over_its_limit_before_tokenizing(
    claude: anthropic.Anthropic,
) -> None:
    """An 8 MB body once took 87 s of tokenizer CPU; over the documented limit it is a 400."""
    from desktop.server._protocols.anthropic.routes import MAX_COUNT_CHARS

    huge = [{"role": "user", "content": "zebra " * 1_300_000}]  # 7.8 MB, under the body limit
    started = time.perf_counter()
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.count_tokens(model="tiny-chat", messages=huge)
    assert time.perf_counter() - started < 5.0  # refused, not tokenized
    assert refused.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": refused.value.body["error"]["message"],
        },
    }
    assert "7800000 characters" in refused.value.message
    assert f"at most {MAX_COUNT_CHARS}" in refused.value.message
    # A long conversation within the limit is still counted.
    within = [{"role": "user", "content": "zebra " * (MAX_COUNT_CHARS // 6 - 100)}]
    assert claude.messages.count_tokens(model="tiny-chat", messages=within).input_tokens > 100_000


def test_keys_errors_and_refusals_in_anthropics_shape(server: Served) -> None:
    with (
        anthropic.Anthropic(base_url=server.root, api_key="edk-wrong", max_retries=0) as bad,
        pytest.raises(anthropic.AuthenticationError) as caught,
    ):
        bad.messages.create(model="tiny-chat", max_tokens=2, messages=HI)
    assert caught.value.body["error"]["type"] == "authentication_error"
    # Claude Code with ANTHROPIC_AUTH_TOKEN sends the key as a Bearer token.
    with anthropic.Anthropic(base_url=server.root, auth_token=server.key, max_retries=0) as bearer:
        assert bearer.messages.create(model="tiny-chat", max_tokens=1, messages=HI).content
    with anthropic.Anthropic(base_url=server.root, api_key=server.key, max_retries=0) as c:
        with pytest.raises(anthropic.BadRequestError) as refused:
            c.messages.create(
                model="tiny-chat",
                max_tokens=2,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "AAAA",
                                },
                            }
                        ],
                    }
                ],
            )
        assert "image" in refused.value.body["error"]["message"]
        with pytest.raises(anthropic.NotFoundError) as missing:
            c.messages.create(model="nope", max_tokens=2, messages=HI)
        assert missing.value.body["error"]["type"] == "not_found_error"
    reply = httpx.post(
        f"{server.root}/v1/messages",
        json={"model": "tiny-chat", "messages": HI},
        headers={"x-api-key": server.key, "anthropic-version": "2023-06-01"},
    )
    assert reply.status_code == 400
    assert reply.json()["type"] == "error" and "max_tokens" in reply.json()["error"]["message"]


def test_a_claude_code_shaped_request_is_served(tmp_path: Path, tiny_chat: Path) -> None:
    # What Claude Code sends: system blocks and tools with cache_control, metadata,
    # thinking, a beta query flag and headers, earlier thinking blocks with signatures,
    # and max_tokens 32000 (lowered to this server's limit of 8).
    with serve(tmp_path / "cc", [tiny_chat], max_tokens_limit=8) as server:
        _claude_code_request(server)


def _claude_code_request(server: Served) -> None:
    body = {
        "model": "tiny-chat",
        "max_tokens": 32000,
        "stream": True,
        "temperature": 1,
        "metadata": {"user_id": "user_abc_account__session_1"},
        "system": [
            {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [
            {
                "name": "Bash",
                "description": "Run a command",
                "input_schema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "required": ["command"],
                },
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                    {"type": "text", "text": "list files", "cache_control": {"type": "ephemeral"}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "run ls", "signature": "sig"},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "ls"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "README.md",
                        "is_error": False,
                    }
                ],
            },
        ],
    }
    headers = {
        "x-api-key": server.key,
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
    }
    with httpx.stream(
        "POST", f"{server.root}/v1/messages?beta=true", json=body, headers=headers, timeout=60
    ) as reply:
        assert reply.status_code == 200
        lines = list(reply.iter_lines())
    names = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    data = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    delta = next(d for d in data if d["type"] == "message_delta")
    assert delta["usage"]["output_tokens"] <= 8


def test_a_stop_sequence_is_named_as_the_reason(
    claude: anthropic.Anthropic, client: openai.OpenAI
) -> None:
    zero = {"temperature": 0}
    chat = client.chat.completions.create(
        model="tiny-chat", temperature=0, max_tokens=12, messages=HI, logprobs=True, top_logprobs=2
    )
    reference = steps(chat.choices[0].logprobs.content)
    whole = chat.choices[0].message.content
    middle = len(whole) // 2
    stop = whole[middle : middle + 2]
    assert stop.strip(), f"the tiny model's answer has no middle to stop at: {whole!r}"
    before = whole[: whole.find(stop)]
    reply = claude.messages.create(
        model="tiny-chat",
        max_tokens=12,
        messages=HI,
        stop_sequences=[stop, "never-said"],
        extra_body=zero,
    )
    # Each request is the same answer up to llama.cpp's rounding for the prompt found
    # cached (tests/near_tie.py); where it is, the stop sequence ends it there.
    said = "".join(b.text for b in reply.content if b.type == "text")
    assert_same_answer(reference, said, "stopped", cut=True)
    if said == before:
        assert reply.stop_reason == "stop_sequence" and reply.stop_sequence == stop
    with claude.messages.stream(
        model="tiny-chat", max_tokens=12, messages=HI, stop_sequences=[stop], extra_body=zero
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert_same_answer(reference, streamed, "stopped, streamed", cut=True)
    if streamed == before:
        assert final.stop_reason == "stop_sequence" and final.stop_sequence == stop
