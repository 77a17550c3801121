"""The Anthropic Messages translation, without a server: blocks, tools, thinking, events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop.base.errors import InvalidRequest
from desktop.engine._types import Delta, ToolCall, Usage
from desktop.server import _request_parts as request_parts
from desktop.server._answer import Ending, answer_pieces
from desktop.server._protocols.anthropic import events as ae
from desktop.server._protocols.anthropic import requests as ar
from desktop.server._protocols.anthropic import translate as aw
from tests.server import bodies
from tests.server.conftest import named_events

pytestmark = pytest.mark.fast

LIMITS = request_parts.Limits(max_tokens=100, timeout_s=5)
WEATHER = {
    "name": "get_weather",
    "description": "Weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "cache_control": {"type": "ephemeral"},
}


def _req(**fields: Any) -> ar.MessagesRequest:
    return ar.MessagesRequest.model_validate(
        {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], **fields}
    )


def test_blocks_become_turns_with_tool_calls_results_and_thinking() -> None:
    messages = bodies.anthropic_messages(
        [
            {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Use tools."},
        ],
        [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "use the tool", "signature": "s"},
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "Oslo"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "rain"}],
                    },
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
    )
    assert [(m.role, m.content) for m in messages] == [
        ("system", "Be brief.\nUse tools."),
        ("user", "Weather in Oslo?"),
        ("assistant", "Checking."),
        ("tool", "rain"),
        ("user", "And tomorrow?"),
    ]
    assert messages[2].reasoning == "use the tool"
    assert json.loads(messages[2].tool_calls[0].arguments) == {"city": "Oslo"}
    assert (messages[3].tool_call_id, messages[3].name) == ("toolu_1", "get_weather")


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        (
            [{"role": "user", "content": [{"type": "image", "source": {}}]}],
            "messages.0.content.0.source",
        ),
        ([{"role": "system", "content": "x"}], "messages"),
        ([{"role": "tool", "content": "x"}], "messages.0.role"),
        (
            [{"role": "user", "content": "x"}, {"role": "assistant", "content": "Sure"}],
            "messages.1",
        ),
        ([{"role": "user", "content": 5}], "messages.0.content"),
    ],
)
def test_bad_messages_are_refused_naming_where(messages: list[Any], param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        bodies.anthropic_messages(None, messages)
    assert caught.value.param == param


def test_tool_choice_auto_any_tool_none() -> None:
    assert aw.tools_for_engine(_req(tools=[WEATHER]))[0].parameters == WEATHER["input_schema"]
    assert aw.tools_for_engine(_req(tools=[WEATHER], tool_choice={"type": "none"})) is None
    forced = _req(tools=[WEATHER], tool_choice={"type": "any"})
    assert aw.is_forced(forced)
    params = aw.generation_params(forced, LIMITS, aw.tools_for_engine(forced))
    assert json.loads(params.json_schema or "")["properties"]["name"] == {"const": "get_weather"}
    with pytest.raises(InvalidRequest) as caught:
        aw.tools_for_engine(_req(tools=[WEATHER], tool_choice={"type": "tool", "name": "x"}))
    assert caught.value.param == "tool_choice.name"
    # Anthropic-defined tools are left out, named; forcing one of them is refused.
    hosted = [
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "bash_20250124", "name": "bash"},
        WEATHER,
    ]
    assert [t.name for t in aw.tools_for_engine(_req(tools=hosted)) or []] == ["get_weather"]
    assert [
        h.kind
        for h in aw.left_out_tools(_req(tools=hosted, mcp_servers=[{"name": "gh", "url": "x"}]))
    ] == ["web_search_20250305", "bash_20250124", "mcp_servers"]
    aw.refuse_unsupported(_req(mcp_servers=[{"url": "x"}]))  # not the wire's to refuse
    with pytest.raises(InvalidRequest, match="'web_search'.*does not run") as caught:
        aw.tools_for_engine(_req(tools=hosted, tool_choice={"type": "tool", "name": "web_search"}))
    assert caught.value.param == "tool_choice.name"
    with pytest.raises(InvalidRequest, match="every tool given"):
        aw.tools_for_engine(_req(tools=hosted[:1], tool_choice={"type": "any"}))
    assert not aw.is_forced(_req(tools=hosted[:1], tool_choice={"type": "any"}))
    # mcp_servers is answered by the route, naming the policy (tests/server/mcp/test_mcp_server.py)


def test_sampling_stop_sequences_and_thinking() -> None:
    params = aw.generation_params(
        _req(temperature=0.2, top_k=5, stop_sequences=["END"]), LIMITS, None
    )
    assert (params.temperature, params.top_k, params.stop, params.max_tokens) == (
        0.2,
        5,
        ("END",),
        10,
    )
    # Claude Code asks for 32000: lowered to the server's limit, not refused.
    assert aw.generation_params(_req(max_tokens=32000), LIMITS, None).max_tokens == 100
    assert aw.template_kwargs(_req(thinking={"type": "enabled", "budget_tokens": 1024})) == {
        "enable_thinking": True
    }
    assert aw.template_kwargs(_req(thinking={"type": "disabled"})) == {"enable_thinking": False}


def test_whole_message_content_stop_reason_and_usage() -> None:
    call = ToolCall("call_ab", "get_weather", '{"city": "Oslo"}')
    body = ae.message_object(
        message_id="msg_1",
        model="m",
        content=ae.content_blocks("hmm", "Checking.", [call]),
        stop="tool_calls",
        usage=Usage(20, 5, 8),
    )
    assert [b["type"] for b in body["content"]] == ["thinking", "text", "tool_use"]
    assert body["content"][2] == {
        "type": "tool_use",
        "id": "toolu_ab",
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }
    assert body["stop_reason"] == "tool_use"
    assert body["usage"] == {
        "input_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 8,
        "output_tokens": 5,
    }


def test_stream_event_sequence() -> None:
    chunks = [
        Delta(reasoning="hm"),
        Delta(text="Hi"),
        Delta(text="!"),
        Delta(finish_reason="length", usage=Usage(4, 3)),
    ]
    events = ae.MessageEvents("msg_1", "m")
    raw = events.opening()
    for item in answer_pieces(chunks):
        raw += events.ending(item) if isinstance(item, Ending) else events.piece(item)
    got = named_events(raw)
    assert [e["type"] for e in got] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [e.get("index") for e in got[2:9]] == [0, 0, 0, 1, 1, 1, 1]
    assert got[6]["delta"] == {"type": "text_delta", "text": "Hi"}
    assert got[9]["delta"]["stop_reason"] == "max_tokens"
    assert got[9]["usage"]["output_tokens"] == 3
    call = ToolCall("call_z", "f", '{"a": 1}')
    tail = named_events(
        ae.MessageEvents("m2", "m").ending(Ending((call,), Delta(finish_reason="stop")))
    )
    assert tail[0]["content_block"]["type"] == "tool_use"
    assert tail[1]["delta"] == {"type": "input_json_delta", "partial_json": '{"a": 1}'}
    assert tail[3]["delta"]["stop_reason"] == "tool_use"


def test_only_the_clients_stop_sequences_are_named() -> None:
    from desktop.engine._types import Delta

    hit = Delta(finish_reason="stop", stop_sequence="END")
    assert ae.stop_fields("stop", hit, ["END"]) == ("stop_sequence", "END")
    # A template's turn marker also stops the engine: that is an ordinary end of turn.
    marker = Delta(finish_reason="stop", stop_sequence="<|user|>")
    assert ae.stop_fields("stop", marker, ["END"]) == ("end_turn", None)
    assert ae.stop_fields("length", hit, ["END"]) == ("max_tokens", None)


def test_a_block_field_of_the_wrong_type_is_refused_naming_the_block() -> None:
    # Typed blocks: the 400 names the field inside the block, not the union it is in.
    with pytest.raises(InvalidRequest) as caught:
        bodies.anthropic_messages(
            None, [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text"}]}]
        )
    assert caught.value.param == "messages.0.content.1.text"
    # A block type this server does not read is still refused by name, with its hint.
    with pytest.raises(InvalidRequest, match="'document' is not supported.*documents") as caught:
        bodies.anthropic_messages(None, [{"role": "user", "content": [{"type": "document"}]}])
    assert caught.value.param == "messages.0.content.0.type"
