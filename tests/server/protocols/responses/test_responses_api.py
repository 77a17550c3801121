"""``/v1/responses`` end to end: a real server over the tiny models, the official openai client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.near_tie import assert_same_answer, steps
from tests.server.conftest import Served, serve

TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["unit"],
            "additionalProperties": False,
        },
    },
    {
        "type": "function",
        "name": "get_time",
        "parameters": {
            "type": "object",
            "properties": {"zone": {"enum": ["utc", "local"]}},
            "required": ["zone"],
            "additionalProperties": False,
        },
    },
]


def test_plain_answer_is_the_chat_routes_answer(client: openai.OpenAI) -> None:
    reply = client.responses.create(
        model="tiny-chat", input="hello world", temperature=0, max_output_tokens=6
    )
    chat = client.chat.completions.create(
        model="tiny-chat",
        messages=[{"role": "user", "content": "hello world"}],
        temperature=0,
        max_tokens=6,
        logprobs=True,
        top_logprobs=2,
    )
    assert reply.id.startswith("resp_") and reply.object == "response"
    assert reply.output[0].type == "message"
    # The chat route's answer (up to llama.cpp's rounding: the second request finds its
    # prompt cached and decodes another batch shape; tests/near_tie.py).
    reference = steps(chat.choices[0].logprobs.content)
    agreed = assert_same_answer(reference, reply.output_text, "responses route")
    assert reply.usage.input_tokens == chat.usage.prompt_tokens
    if agreed == len(reference):  # no flip: then its length is the chat route's too
        assert reply.usage.output_tokens == chat.usage.completion_tokens
    # The tiny model rambles: six tokens end it at the limit, which OpenAI calls incomplete.
    assert (reply.status, reply.incomplete_details.reason) == ("incomplete", "max_output_tokens")


def test_instructions_and_items_reach_the_prompt(client: openai.OpenAI) -> None:
    bare = client.responses.create(model="tiny-chat", input="hello", max_output_tokens=1)
    ruled = client.responses.create(
        model="tiny-chat",
        instructions="Answer in French, briefly.",
        max_output_tokens=1,
        input=[{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}],
    )
    assert ruled.usage.input_tokens > bare.usage.input_tokens + 3
    assert ruled.instructions == "Answer in French, briefly."


def test_streamed_events_in_order_with_the_same_text(client: openai.OpenAI) -> None:
    whole = client.responses.create(
        model="tiny-chat", input="hello world", temperature=0, max_output_tokens=12
    )
    chat = client.chat.completions.create(
        model="tiny-chat",
        messages=[{"role": "user", "content": "hello world"}],
        temperature=0,
        max_tokens=12,
        logprobs=True,
        top_logprobs=2,
    )
    reference = steps(chat.choices[0].logprobs.content)  # the answer, with its near ties
    events = list(
        client.responses.create(
            model="tiny-chat", input="hello world", temperature=0, max_output_tokens=12, stream=True
        )
    )
    types = [e.type for e in events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.incomplete",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    # Three requests, one answer up to llama.cpp's rounding for the cached prompt.
    assert len(deltas) > 3
    assert_same_answer(reference, "".join(deltas), "streamed")
    assert_same_answer(reference, whole.output_text, "whole")
    assert events[-1].response.output[0].content[0].text == "".join(deltas)


def test_forced_function_call_whole_and_streamed(client: openai.OpenAI) -> None:
    reply = client.responses.create(
        model="tiny-chat", input="hello", tools=TOOLS, tool_choice="required", max_output_tokens=200
    )
    [call] = [item for item in reply.output if item.type == "function_call"]
    assert call.name in ("get_weather", "get_time") and call.call_id
    assert json.loads(call.arguments) in (
        {"unit": "celsius"},
        {"unit": "fahrenheit"},
        {"zone": "utc"},
        {"zone": "local"},
    )
    assert reply.status == "completed"
    events = list(
        client.responses.create(
            model="tiny-chat",
            input="hello",
            tools=TOOLS,
            max_output_tokens=200,
            stream=True,
            tool_choice={"type": "function", "name": "get_time"},
        )
    )
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert len(done) == 1 and json.loads(done[0].arguments)["zone"] in ("utc", "local")
    assert events[-1].type == "response.completed"
    assert [i.type for i in events[-1].response.output] == ["function_call"]


def test_json_schema_text_format(client: openai.OpenAI) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"enum": ["yes", "no"]}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    reply = client.responses.create(
        model="tiny-chat",
        input="hello",
        max_output_tokens=200,
        temperature=0.7,
        text={"format": {"type": "json_schema", "name": "a", "schema": schema}},
    )
    assert json.loads(reply.output_text)["answer"] in ("yes", "no")


def test_previous_response_id_get_and_delete(client: openai.OpenAI, server: Served) -> None:
    first = client.responses.create(model="tiny-chat", input="hello", max_output_tokens=3)
    assert first.store is True  # OpenAI's default: kept unless store is false
    second = client.responses.create(
        model="tiny-chat", input="and again", previous_response_id=first.id, max_output_tokens=3
    )
    alone = client.responses.create(
        model="tiny-chat", input="and again", max_output_tokens=3, store=False
    )
    assert alone.store is False
    # The earlier turn (question and answer) is part of the second prompt.
    assert second.usage.input_tokens > alone.usage.input_tokens + first.usage.output_tokens
    assert client.responses.retrieve(first.id).output_text == first.output_text
    items = client.responses.input_items.list(second.id).data
    assert [i.type for i in items] == ["message", "message", "message"]
    assert client.responses.delete(first.id) is None
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="tiny-chat", input="x", previous_response_id=first.id)
    assert caught.value.body["param"] == "previous_response_id"
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(alone.id)  # store: false keeps nothing


def test_a_streamed_response_is_stored_as_it_ended(client: openai.OpenAI) -> None:
    events = list(
        client.responses.create(model="tiny-chat", input="hello", stream=True, max_output_tokens=4)
    )
    final = events[-1].response
    assert final.store is True
    kept = client.responses.retrieve(final.id)
    assert kept.output_text == final.output[0].content[0].text
    assert kept.usage.output_tokens == final.usage.output_tokens == 4
    follow = client.responses.create(
        model="tiny-chat", input="more", max_output_tokens=1, previous_response_id=final.id
    )
    assert follow.usage.input_tokens > final.usage.input_tokens + 4


def test_another_key_cannot_read_continue_or_delete_a_response(
    client: openai.OpenAI, server: Served
) -> None:
    mine = client.responses.create(model="tiny-chat", input="a secret", max_output_tokens=2)
    with openai.OpenAI(
        base_url=server.url, api_key=server.keys.create("other-client"), max_retries=0
    ) as other:
        with pytest.raises(openai.NotFoundError):
            other.responses.retrieve(mine.id)
        with pytest.raises(openai.NotFoundError):
            other.responses.delete(mine.id)
        with pytest.raises(openai.BadRequestError) as caught:
            other.responses.create(model="tiny-chat", input="and?", previous_response_id=mine.id)
        assert caught.value.body["code"] == "previous_response_not_found"
    assert client.responses.retrieve(mine.id).id == mine.id


def test_a_key_made_again_under_the_same_name_reads_none_of_the_old_ones(
    server: Served,
) -> None:
    # Stored responses belong to the key itself, not to its name: "alice" revoked and
    # made again (by another person, or after a leak) is a new key with nothing stored.
    with openai.OpenAI(
        base_url=server.url, api_key=server.keys.create("alice"), max_retries=0
    ) as alice:
        kept = alice.responses.create(model="tiny-chat", input="my secret", max_output_tokens=2)
        assert alice.responses.retrieve(kept.id).id == kept.id
    server.keys.revoke("alice")
    with openai.OpenAI(
        base_url=server.url, api_key=server.keys.create("alice"), max_retries=0
    ) as again:
        with pytest.raises(openai.NotFoundError):
            again.responses.retrieve(kept.id)
        with pytest.raises(openai.BadRequestError) as caught:
            again.responses.create(model="tiny-chat", input="and?", previous_response_id=kept.id)
        assert caught.value.body["code"] == "previous_response_not_found"
        with pytest.raises(openai.NotFoundError):
            again.responses.delete(kept.id)
        mine = again.responses.create(model="tiny-chat", input="hello", max_output_tokens=2)
        assert again.responses.retrieve(mine.id).id == mine.id  # its own, it reads
    server.keys.revoke("alice")


def test_unsupported_fields_and_items_are_refused_by_name(client: openai.OpenAI) -> None:
    for extra, param in (
        ({"background": True}, "background"),
        ({"truncation": "auto"}, "truncation"),
        (
            {
                "input": [
                    {"role": "user", "content": [{"type": "input_image", "image_url": "data:,"}]}
                ]
            },
            "input.0.content.0.image_url",
        ),
    ):
        fields = {"model": "tiny-chat", "input": "hi", **extra}
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(**fields)
        assert caught.value.body["param"] == param


def test_wrong_key_and_unknown_model(server: Served) -> None:
    with (
        openai.OpenAI(base_url=server.url, api_key="edk-wrong", max_retries=0) as bad,
        pytest.raises(openai.AuthenticationError),
    ):
        bad.responses.create(model="tiny-chat", input="hi")
    reply = httpx.post(
        f"{server.url}/responses",
        headers={"x-api-key": server.key},
        json={"model": "nope", "input": "hi"},
    )
    assert reply.status_code == 404 and reply.json()["error"]["code"] == "model_not_found"


@pytest.fixture(scope="module")
def ephemeral(tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("ephemeral")
    (home / "config").mkdir()
    (home / "config" / "settings.toml").write_text("ephemeral_only = true\n")
    with serve(home, [tiny_chat]) as served:
        yield served


def test_ephemeral_only_refuses_store_true_and_keeps_nothing(ephemeral: Served) -> None:
    with openai.OpenAI(base_url=ephemeral.url, api_key=ephemeral.key, max_retries=0) as c:
        with pytest.raises(openai.BadRequestError) as caught:
            c.responses.create(model="tiny-chat", input="hi", store=True)
        assert caught.value.body["param"] == "store"
        assert "EphemeralOnly" in caught.value.body["message"]
        reply = c.responses.create(model="tiny-chat", input="hi", max_output_tokens=2)
        assert reply.store is False
        with pytest.raises(openai.NotFoundError):
            c.responses.retrieve(reply.id)


def test_a_codex_shaped_request_streams_to_the_end(server: Served) -> None:
    # The fields Codex CLI sends with a custom model provider (wire_api = "responses").
    body = {
        "model": "tiny-chat",
        "instructions": "You are a coding agent.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "<permissions>…</permissions>"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "list the files"}],
            },
            {"type": "reasoning", "summary": [], "content": None, "encrypted_content": None},
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "call_1",
                "arguments": '{"command": ["ls"]}',
            },
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": '{"output": "README.md\\n", "metadata": {"exit_code": 0}}',
            },
        ],
        "tools": [
            {
                "type": "function",
                "name": "shell",
                "description": "Runs a command",
                "strict": False,
                "parameters": {
                    "type": "object",
                    "properties": {"command": {"type": "array", "items": {"type": "string"}}},
                    "required": ["command"],
                    "additionalProperties": False,
                },
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": None,
        "store": False,
        "stream": True,
        "include": [],
        "prompt_cache_key": "0199-abc",
        "max_output_tokens": 8,
    }
    with httpx.stream(
        "POST",
        f"{server.url}/responses",
        json=body,
        timeout=60,
        headers={"Authorization": f"Bearer {server.key}"},
    ) as reply:
        assert reply.status_code == 200
        data = [
            json.loads(line.removeprefix("data: "))
            for line in reply.iter_lines()
            if line.startswith("data: ")
        ]
    assert data[0]["type"] == "response.created"
    assert data[-1]["type"] in ("response.completed", "response.incomplete")
    assert data[-1]["response"]["usage"]["input_tokens"] > 40
