"""The Responses API output objects, without a server: items, ids, usage, response."""

from __future__ import annotations

from typing import Any

from desktop.engine._types import ToolCall, Usage
from desktop.server._protocols.responses import output as ro
from desktop.server._protocols.responses import requests as rr
from desktop.server._protocols.responses import translate as rw
from tests.fixtures.codex_tools import GITHUB, WEATHER


def _req(**fields: Any) -> rr.ResponsesRequest:
    return rr.ResponsesRequest.model_validate({"model": "m", "input": "hi", **fields})


def test_whole_response_items_status_and_usage() -> None:
    ids = ro.Ids("resp_abc")
    call = ToolCall("call_1", "get_weather", '{"city": "Oslo"}')
    output = ro.output_items(ids, "thinking…", "", [call])
    assert [i["type"] for i in output] == ["reasoning", "function_call"]
    assert output[1]["call_id"] == "call_1" and output[1]["id"] == "fc_abc_0"
    body = ro.response_object(
        _req(),
        ids=ids,
        created_at=1,
        status="completed",
        output=output,
        usage=Usage(10, 4, 3),
        stop="tool_calls",
    )
    assert body["status"] == "completed" and body["incomplete_details"] is None
    assert body["usage"] == {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 3},
        "output_tokens": 4,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 14,
    }
    cut = ro.response_object(
        _req(),
        ids=ids,
        created_at=1,
        status="completed",
        output=ro.output_items(ids, "", "Hel", []),
        stop="length",
    )
    assert cut["status"] == "incomplete"
    assert cut["incomplete_details"] == {"reason": "max_output_tokens"}


def test_calls_of_namespaced_tools_go_back_with_their_namespace() -> None:
    _, spaces = rw.flatten_namespaces(_req(tools=[GITHUB, WEATHER]))
    ids = ro.Ids("resp_n")
    calls = [
        ToolCall("call_1", "mcp__github__create_issue", '{"title": "x"}'),
        ToolCall("call_2", "get_weather", "{}"),
    ]
    items = ro.output_items(ids, "", "", calls, spaces)
    assert [(i["name"], i.get("namespace")) for i in items] == [
        ("create_issue", "mcp__github__"),
        ("get_weather", None),
    ]
    assert "namespace" not in items[1]
    # The whole item, as Codex sends it back next turn (test_responses_wire reads it).
    assert items[0] == {
        "type": "function_call",
        "id": "fc_n_0",
        "call_id": "call_1",
        "name": "create_issue",
        "arguments": '{"title": "x"}',
        "status": "completed",
        "namespace": "mcp__github__",
    }
