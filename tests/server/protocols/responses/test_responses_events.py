"""The streamed Responses API events, without a server: order, numbering, calls, failure."""

from __future__ import annotations

from typing import Any

from desktop.engine._types import Delta, ToolCall, Usage
from desktop.server._answer import Ending, answer_pieces
from desktop.server._protocols.responses import output as ro
from desktop.server._protocols.responses import requests as rr
from desktop.server._protocols.responses import translate as rw
from desktop.server._protocols.responses.events import ResponseEvents
from tests.server.conftest import named_events


def _req(**fields: Any) -> rr.ResponsesRequest:
    return rr.ResponsesRequest.model_validate({"model": "m", "input": "hi", **fields})


def test_stream_events_are_numbered_in_the_documented_order() -> None:
    chunks = [
        Delta(reasoning="hmm"),
        Delta(text="Hel"),
        Delta(text="lo"),
        Delta(finish_reason="stop", usage=Usage(5, 3)),
    ]
    events = ResponseEvents(_req(), ro.Ids("resp_x"), 1, stored=False)
    raw = events.opening()
    for item in answer_pieces(chunks):
        raw += events.ending(item) if isinstance(item, Ending) else events.piece(item)
    got = named_events(raw)
    assert [e["sequence_number"] for e in got] == list(range(len(got)))
    assert [e["type"] for e in got] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert got[10]["text"] == "Hello"
    final = got[-1]["response"]
    assert [i["type"] for i in final["output"]] == ["reasoning", "message"]
    assert final["output"][1]["content"][0]["text"] == "Hello"
    assert final["usage"]["output_tokens"] == 3


def test_streamed_calls_and_failurenamed_events() -> None:
    events = ResponseEvents(_req(), ro.Ids("resp_y"), 1, stored=True)
    call = ToolCall("call_9", "get_weather", '{"city": "Oslo"}')
    got = named_events(
        events.opening() + events.ending(Ending((call,), Delta(finish_reason="stop")))
    )
    assert [e["type"] for e in got[2:]] == [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert got[4]["arguments"] == call.arguments
    assert got[-1]["response"]["store"] is True
    failed = named_events(events.failed("context_length_exceeded", "too long"))[0]
    assert failed["type"] == "response.failed"
    assert failed["response"]["error"] == {"code": "context_length_exceeded", "message": "too long"}


def test_a_streamed_call_of_a_namespaced_tool_carries_its_namespace() -> None:
    group = {
        "type": "namespace",
        "name": "mcp__github__",
        "tools": [{"type": "function", "name": "create_issue", "parameters": {}}],
    }
    req = _req(tools=[group])
    _, spaces = rw.flatten_namespaces(req)
    events = ResponseEvents(req, ro.Ids("resp_z"), 1, stored=False, spaces=spaces)
    call = ToolCall("call_1", "mcp__github__create_issue", "{}")
    got = named_events(events.ending(Ending((call,), Delta(finish_reason="stop"))))
    added, done = got[0]["item"], got[3]["item"]
    for item in (added, done):
        assert (item["name"], item["namespace"]) == ("create_issue", "mcp__github__")
    assert got[2]["name"] == "create_issue"
    assert got[-1]["response"]["output"] == [done]
    assert got[-1]["response"]["tools"] == [group]  # echoed as sent
