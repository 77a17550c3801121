"""The Responses API request translation, without a server: input items, tools, params."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop.base.errors import InvalidRequest
from desktop.server import _request_parts as request_parts
from desktop.server._protocols.responses import requests as rr
from desktop.server._protocols.responses import translate as rw
from desktop.server._protocols.responses.namespaces import Namespaced
from tests.fixtures.codex_tools import AGENTS, GITHUB, WEATHER
from tests.server import bodies

pytestmark = pytest.mark.fast

LIMITS = request_parts.Limits(max_tokens=100, timeout_s=5)


def _req(**fields: Any) -> rr.ResponsesRequest:
    return rr.ResponsesRequest.model_validate({"model": "m", "input": "hi", **fields})


def test_items_become_the_conversation_with_calls_results_and_reasoning() -> None:
    items = [
        {"role": "developer", "content": "be brief"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Weather?"}],
        },
        {
            "type": "reasoning",
            "summary": [],
            "content": [{"type": "reasoning_text", "text": "need a tool"}],
        },
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
        },
        {
            "type": "function_call",
            "call_id": "c2",
            "name": "get_weather",
            "arguments": '{"city": "Rome"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": "rain"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Rain in Oslo."}],
        },
    ]
    messages = bodies.responses_messages("You are helpful.", items)
    assert [(m.role, m.content) for m in messages] == [
        ("system", "You are helpful."),
        ("system", "be brief"),
        ("user", "Weather?"),
        ("assistant", ""),
        ("tool", "rain"),
        ("assistant", "Rain in Oslo."),
    ]
    calls = messages[3].tool_calls
    assert [(c.id, c.name) for c in calls] == [("c1", "get_weather"), ("c2", "get_weather")]
    assert messages[3].reasoning == "need a tool"
    assert (messages[4].tool_call_id, messages[4].name) == ("c1", "get_weather")


@pytest.mark.parametrize(
    ("items", "param"),
    [
        (
            [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}],
            "input.0.content.0.image_url",
        ),
        ([{"type": "item_reference", "id": "x"}], "input.0.type"),
        (
            [
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"},
                {"role": "user", "content": "x"},
            ],
            "input.0.arguments",
        ),
        ([{"role": "wizard", "content": "x"}], "input.0.role"),
        (["just a string"], "input.0"),
        ([{"role": "system", "content": "only rules"}], "input"),
    ],
)
def test_bad_items_are_refused_naming_where(items: list[Any], param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        bodies.responses_messages(None, items)
    assert caught.value.param == param


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"background": True}, "background"),
        ({"conversation": "conv_1"}, "conversation"),
        ({"truncation": "auto"}, "truncation"),
        ({"include": ["reasoning.encrypted_content", "file_search_call.results"]}, "include.1"),
        ({"top_logprobs": 3}, "top_logprobs"),
    ],
)
def test_unsupported_fields_are_refused_by_name(fields: dict[str, Any], param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        rw.refuse_unsupported(_req(**fields))
    assert caught.value.param == param


def test_tools_choices_and_sampling() -> None:
    assert rw.tools_for_engine(_req(tools=[WEATHER]))[0].name == "get_weather"
    assert rw.tools_for_engine(_req(tools=[WEATHER], tool_choice="none")) is None
    # What Codex sends besides its functions is left out and named, not refused.
    codex = [
        {"type": "web_search", "external_web_access": False},
        {
            "type": "namespace",
            "name": "mcp__github__",
            "description": "GitHub",
            "tools": [{"type": "function", "name": "create_issue", "parameters": {}}],
        },
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
        WEATHER,
    ]
    assert [t.name for t in rw.tools_for_engine(_req(tools=codex)) or []] == ["get_weather"]
    assert [h.kind for h in rw.left_out_tools(_req(tools=codex))] == [
        "web_search",
        "namespace",
        "custom",
    ]
    assert rw.tools_for_engine(_req(tools=codex[:1])) is None
    for choice, named in (
        ({"type": "web_search"}, "web_search"),
        ({"type": "function", "name": "create_issue"}, "create_issue"),
        ({"type": "custom", "name": "apply_patch"}, "apply_patch"),
    ):
        with pytest.raises(InvalidRequest, match=f"forces '{named}'") as caught:
            rw.tools_for_engine(_req(tools=codex, tool_choice=choice))
        assert caught.value.param == "tool_choice"
    with pytest.raises(InvalidRequest, match="every tool given.*web_search"):
        rw.tools_for_engine(_req(tools=codex[:1], tool_choice="required"))
    with pytest.raises(InvalidRequest) as caught:
        rw.tools_for_engine(_req(tools=[WEATHER], tool_choice={"type": "function", "name": "nope"}))
    assert caught.value.param == "tool_choice"
    forced = _req(tools=[WEATHER], tool_choice="required")
    params = rw.generation_params(forced, LIMITS, rw.tools_for_engine(forced))
    assert json.loads(params.json_schema or "")["properties"]["name"] == {"const": "get_weather"}
    plain = rw.generation_params(_req(max_output_tokens=7), LIMITS, None)
    assert (plain.max_tokens, plain.temperature, plain.top_p) == (7, 1.0, 1.0)
    # Above the server's limit: lowered to it, not refused.
    assert rw.generation_params(_req(max_output_tokens=32000), LIMITS, None).max_tokens == 100
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    fmt = _req(text={"format": {"type": "json_schema", "name": "x", "schema": schema}})
    assert json.loads(rw.generation_params(fmt, LIMITS, None).json_schema or "") == schema


def test_reasoning_effort_is_the_thinking_switch() -> None:
    assert rw.template_kwargs(_req()) is None
    assert rw.template_kwargs(_req(reasoning={"effort": "high"})) == {"enable_thinking": True}
    assert rw.template_kwargs(_req(reasoning={"effort": "none"})) == {"enable_thinking": False}


def test_namespace_tools_reach_the_engine_as_function_tools() -> None:
    # The flattening itself is tested in test_tool_namespaces; here, the request around it.
    req = _req(tools=[{"type": "web_search"}, GITHUB, AGENTS, WEATHER])
    flat, spaces = rw.flatten_namespaces(req)
    assert [t.name for t in rw.tools_for_engine(flat) or []] == [
        "mcp__github__create_issue",
        "multi_agent_v1__close_agent",
        "multi_agent_v1__create_issue",
        "get_weather",
    ]
    assert spaces.split("mcp__github__create_issue") == ("mcp__github__", "create_issue")
    # Only what is not a function (web_search; custom inside a namespace) is left out.
    assert [h.kind for h in rw.left_out_tools(flat)] == ["web_search", "custom"]
    assert req.tools is not None and rr.dumped(req.tools[1]) == GITHUB  # echoed as sent
    # Nothing to flatten: the very same request, and an empty map.
    plain = _req(tools=[WEATHER])
    assert rw.flatten_namespaces(plain) == (plain, Namespaced())
    # A namespace with no function in it is left out and named, as a hosted tool is.
    odd, _ = rw.flatten_namespaces(_req(tools=[{"type": "namespace", "name": "x", "tools": 5}]))
    assert rw.tools_for_engine(odd) is None
    assert [h.kind for h in rw.left_out_tools(odd)] == ["namespace"]


def test_a_forced_choice_of_a_namespaced_tool_offers_only_its_flat_tool() -> None:
    choice = {"type": "function", "name": "close_agent", "namespace": "multi_agent_v1"}
    flat, _ = rw.flatten_namespaces(_req(tools=[GITHUB, AGENTS], tool_choice=choice))
    assert [t.name for t in rw.tools_for_engine(flat) or []] == ["multi_agent_v1__close_agent"]
    assert rw.is_forced(flat)
    # In two namespaces and no namespace given: ambiguous, so not among the tools (400).
    flat, _ = rw.flatten_namespaces(
        _req(tools=[GITHUB, AGENTS], tool_choice={"type": "function", "name": "create_issue"})
    )
    with pytest.raises(InvalidRequest, match="create_issue"):
        rw.tools_for_engine(flat)


def test_a_namespaced_call_sent_back_reaches_the_model_by_its_flat_name() -> None:
    # Codex sends our call back with its namespace next turn (as responses_output made it).
    _, spaces = rw.flatten_namespaces(_req(tools=[GITHUB, WEATHER]))
    call = {
        "type": "function_call",
        "id": "fc_n_0",
        "call_id": "call_1",
        "name": "create_issue",
        "namespace": "mcp__github__",
        "arguments": '{"title": "x"}',
        "status": "completed",
    }
    history = [
        {"role": "user", "content": "file it"},
        call,
        {"type": "function_call_output", "call_id": "call_1", "output": "#12"},
    ]
    messages = bodies.responses_messages(None, history, spaces)
    assert messages[1].tool_calls[0].name == "mcp__github__create_issue"
    assert messages[2].name == "mcp__github__create_issue"
    # Without the map (a later request that no longer offers the tool): Codex's flat name.
    assert (
        bodies.responses_messages(None, history)[1].tool_calls[0].name
        == "mcp__github__create_issue"
    )


def test_items_are_kept_exactly_as_sent_and_a_bad_part_is_named() -> None:
    sent = [
        {"role": "user", "content": "hi", "vendor_field": {"x": 1}},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}", "id": "fc_1"},
    ]
    req = _req(input=sent)
    assert isinstance(req.input, list)
    assert [rr.dumped(item) for item in req.input] == sent  # stored and echoed as sent
    with pytest.raises(InvalidRequest) as caught:
        bodies.responses_messages(
            None, [{"role": "user", "content": [{"type": "input_text", "text": 5}]}]
        )
    assert caught.value.param == "input.0.content.0.text"
