"""What agents send is accepted as peers accept it, and what was left out is said.

End to end through the real ``openai``, ``anthropic`` and ``ollama`` clients against a real
uvicorn over the tiny chat model: Codex-shaped hosted tools are left out and named in a
header, forcing one is a 400, Claude-Code-shaped system messages mid-conversation reach
the prompt, huge output limits are lowered, unknown fields are ignored, a prompt that
cannot fit is a 400 naming both numbers on every route (and in the access log), and an
answer the context cut says so. The pure rules are tested first.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from desktop.base.errors import InvalidRequest
from desktop.engine._types import ChatCall, Delta, Message, Usage
from desktop.server import _leniency as lv
from desktop.server._metrics import AccessRecord
from desktop.server._protocols.anthropic.events import stop_fields
from desktop.server._protocols.responses import output as ro
from desktop.server._protocols.responses import requests as rr
from tests.server import bodies
from tests.server.conftest import Served, serve

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
# What Codex CLI sends besides its own function tools (openai/codex tool specs).
CODEX_TOOLS = [
    WEATHER,
    {"type": "web_search", "external_web_access": False},
    {
        "type": "namespace",
        "name": "mcp__github__",
        "description": "GitHub tools",
        "tools": [
            {
                "type": "function",
                "name": "create_issue",
                "description": "",
                "strict": False,
                "parameters": {"type": "object", "properties": {}},
            }
        ],
    },
]
SECRET = "reminder-zebra-42"  # a word the tiny model's template would only show if passed


# ---------------------------------------------------------------- the pure rules


def test_split_keeps_what_runs_and_names_the_rest() -> None:
    kept, left = lv.split_tools(CODEX_TOOLS, ("function", None))
    assert [i for i, _ in kept] == [0]
    assert lv.labels(left) == ["web_search", "namespace"]
    assert left[1].names() == {"namespace", "mcp__github__", "create_issue"}
    with pytest.raises(InvalidRequest, match="'create_issue', a namespace tool"):
        lv.refuse_forced("create_issue", left)
    lv.refuse_forced("get_weather", left)  # a function tool: not this rule's to refuse
    # Whatever a client puts in ``type`` cannot break the header or the server.
    odd = [{"type": ["x"]}, {"type": "evil\r\nSet-Cookie: a=b"}, {"type": "namespace", "tools": 5}]
    assert lv.labels(lv.split_tools(odd, ("function", None))[1]) == [
        "x",
        "evilSet-Cookie:ab",
        "namespace",
    ]


def test_output_limit_is_lowered_never_refused() -> None:
    assert lv.capped_max_tokens(32000, 8192) == 8192
    assert lv.capped_max_tokens(10, 8192) == 10
    assert lv.capped_max_tokens(None, 8192) == 8192


def _final(reason: str, completion: int) -> Delta:
    return Delta(
        finish_reason=reason,
        usage=Usage(
            prompt_tokens=100,  # type: ignore[arg-type]
            completion_tokens=completion,
        ),
    )


def test_an_answer_cut_by_the_context_is_told_from_one_cut_by_the_limit() -> None:
    assert lv.ended_by_context(_final("length", 12), 8192)
    assert not lv.ended_by_context(_final("length", 8192), 8192)
    assert not lv.ended_by_context(_final("stop", 12), 8192)
    req = rr.ResponsesRequest(model="m", input="hi")
    ids = ro.Ids("resp_1")
    by_context = ro.response_object(
        req, ids=ids, created_at=0, status="completed", output=[], stop="length", by_context=True
    )
    assert by_context["incomplete_details"] == {"reason": "context_length_exceeded"}
    by_limit = ro.response_object(
        req, ids=ids, created_at=0, status="completed", output=[], stop="length"
    )
    assert by_limit["incomplete_details"] == {"reason": "max_output_tokens"}
    assert (
        stop_fields("length", _final("length", 12), None, 8192)[0]
        == "model_context_window_exceeded"
    )
    assert stop_fields("length", _final("length", 8192), None, 8192)[0] == "max_tokens"


def test_the_console_line_names_the_refusal_but_no_content() -> None:
    record = AccessRecord(
        time="t",
        request_id="req_1",
        key_name="k",
        method="POST",
        route="/v1/messages",
        status=400,
        model="m",
        tokens_in=19506,
        latency_ms=12.3,
        error_code="context_length_exceeded",
        dropped_tools=["web_search"],
    )
    assert record.summary() == (
        "req_1 POST /v1/messages model=m status=400 tokens=19506+0 "
        "12ms error=context_length_exceeded dropped=web_search"
    )


# ---------------------------------------------------------------- end to end


class Records:
    """The access records of finished requests, by request id (waited for, not polled)."""

    def __init__(self) -> None:
        self._got: dict[str, AccessRecord] = {}
        self._cond = threading.Condition()

    def __call__(self, record: AccessRecord) -> None:
        with self._cond:
            self._got[record.request_id] = record
            self._cond.notify_all()

    def of(self, reply: httpx.Response | Any) -> AccessRecord:
        """The record of the request ``reply`` answered (written just after it went out)."""
        rid = reply.headers["x-request-id"]
        with self._cond:
            assert self._cond.wait_for(lambda: rid in self._got, timeout=30)
            return self._got[rid]


@pytest.fixture
def records(server: Served) -> Iterator[Records]:
    got = Records()
    unsubscribe = server.runner.subscribe(got)
    yield got
    unsubscribe()


@pytest.fixture
def claude(server: Served) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=server.root, api_key=server.key, max_retries=0, timeout=60
    ) as c:
        yield c


def _context(server: Served) -> int:
    server.scheduler.load("tiny-chat")  # a no-op once an earlier test loaded it
    [loaded] = [m for m in server.scheduler.loaded() if m.model_id == "tiny-chat"]
    return loaded.report.context_length


def test_codex_shaped_request_gets_200_and_the_header_names_what_was_left_out(
    client: openai.OpenAI, server: Served, records: Records
) -> None:
    raw = client.responses.with_raw_response.create(
        model="tiny-chat",
        input="hello world",
        tools=CODEX_TOOLS,
        max_output_tokens=4,
        temperature=0,
        store=False,
        extra_body={"prompt_cache_key": "abc", "client_metadata": {"x": 1}},
    )
    assert raw.status_code == 200
    # The namespace's function is offered (flattened); only web_search is left out.
    assert raw.headers["x-edgedesk-dropped-tools"] == "web_search"
    assert raw.headers["x-edgedesk-context"] == str(_context(server))
    assert raw.parse().status in ("completed", "incomplete")
    with client.responses.with_streaming_response.create(
        model="tiny-chat",
        input="hello world",
        tools=CODEX_TOOLS,
        max_output_tokens=4,
        stream=True,
        store=False,
    ) as streamed:
        assert streamed.headers["x-edgedesk-dropped-tools"] == "web_search"
        assert any(
            "response.completed" in line or "response.incomplete" in line
            for line in streamed.iter_lines()
        )
    assert records.of(raw).dropped_tools == ["web_search"]


def test_forcing_a_tool_that_was_left_out_is_a_400_naming_it(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="'web_search'") as caught:
        client.responses.create(
            model="tiny-chat",
            input="hi",
            tools=CODEX_TOOLS,
            tool_choice={"type": "web_search"},
            store=False,
        )
    assert caught.value.body["param"] == "tool_choice"
    with pytest.raises(openai.BadRequestError, match="every tool given.*web_search"):
        client.responses.create(
            model="tiny-chat",
            input="hi",
            tools=CODEX_TOOLS[1:2],
            tool_choice="required",
            store=False,
        )


def test_codex_namespace_tools_are_callable_and_calls_carry_their_namespace(
    client: openai.OpenAI,
) -> None:
    # The model is offered mcp__github__create_issue; Codex routes a call by the pair
    # (namespace, name), so the call must come back in that shape, whole and streamed.
    forced = {"type": "function", "name": "create_issue", "namespace": "mcp__github__"}
    reply = client.responses.with_raw_response.create(
        model="tiny-chat",
        input="file an issue",
        tools=CODEX_TOOLS,
        tool_choice=forced,  # type: ignore[arg-type]
        max_output_tokens=60,
        store=False,
        temperature=0,
    )
    assert reply.headers["x-edgedesk-dropped-tools"] == "web_search"
    body = reply.http_response.json()
    [call] = [i for i in body["output"] if i["type"] == "function_call"]
    assert (call["name"], call["namespace"]) == ("create_issue", "mcp__github__")
    assert body["tools"] == CODEX_TOOLS  # echoed as sent, not as flattened
    with client.responses.with_streaming_response.create(
        model="tiny-chat",
        input="file an issue",
        tools=CODEX_TOOLS,
        tool_choice=forced,  # type: ignore[arg-type]
        max_output_tokens=60,
        stream=True,
        store=False,
        temperature=0,
    ) as streamed:
        events = [
            json.loads(line[6:]) for line in streamed.iter_lines() if line.startswith("data: ")
        ]
    [done] = [
        e["item"]
        for e in events
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"
    ]
    assert (done["name"], done["namespace"]) == ("create_issue", "mcp__github__")
    # Turn 2, as Codex sends it: the call (with its namespace) and the tool's output.
    turn2 = client.responses.create(
        model="tiny-chat",
        tools=CODEX_TOOLS,
        max_output_tokens=4,
        store=False,
        input=[  # type: ignore[arg-type]
            {"role": "user", "content": "file an issue"},
            {
                "type": "function_call",
                "call_id": call["call_id"],
                "name": "create_issue",
                "namespace": "mcp__github__",
                "arguments": call["arguments"],
            },
            {"type": "function_call_output", "call_id": call["call_id"], "output": "#12"},
        ],
    )
    assert turn2.status in ("completed", "incomplete")


def test_codex_captured_tools_flatten_its_namespace(client: openai.OpenAI) -> None:
    # The tool list Codex 0.171 really sent (its sub-agent tools are a namespace).
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "agent_requests"
    tools = json.loads((fixture / "codex-responses.json").read_text())["requests"][0]["tools"]
    [group] = [t for t in tools if t["type"] == "namespace"]
    own = group["tools"][0]["name"]
    raw = client.responses.with_raw_response.create(
        model="tiny-chat",
        input="close it",
        tools=tools,
        max_output_tokens=300,
        store=False,
        temperature=0,
        tool_choice={"type": "function", "name": own, "namespace": group["name"]},
    )  # type: ignore[arg-type]
    assert raw.headers["x-edgedesk-dropped-tools"] == "web_search"
    body = raw.http_response.json()
    calls = [i for i in body["output"] if i["type"] == "function_call"]
    assert len(calls) == 1, body
    call = calls[0]
    assert (call["name"], call["namespace"]) == (own, group["name"])


def test_chat_completions_leaves_out_non_function_tools(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="tiny-chat",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=3,
        tools=[
            {"type": "function", "function": {"name": "f", "parameters": {}}},
            {"type": "web_search_preview"},
        ],
    )
    assert raw.status_code == 200
    assert raw.headers["x-edgedesk-dropped-tools"] == "web_search_preview"


def test_claude_code_shaped_system_messages_reach_the_prompt(
    claude: anthropic.Anthropic, server: Served
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "hello world"},
        {"role": "assistant", "content": "hello"},
        {"role": "system", "content": f"<system-reminder>{SECRET}</system-reminder>"},
        {"role": "user", "content": [{"type": "text", "text": "and you"}]},
    ]
    tools = [
        {"name": "Read", "input_schema": {"type": "object", "properties": {}}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
    ]
    raw = claude.messages.with_raw_response.create(
        model="tiny-chat",
        max_tokens=32000,
        system="You are Claude Code.",
        messages=messages,
        tools=tools,
        extra_body={"context_management": {"edits": []}},
    )
    assert raw.status_code == 200
    assert raw.headers["x-edgedesk-dropped-tools"] == "web_search_20250305"
    reply = raw.parse()
    assert reply.stop_reason in (
        "end_turn",
        "max_tokens",
        "tool_use",
        "model_context_window_exceeded",
    )
    # The prompt the model read holds the reminder, and counting agrees it was added.

    prompt = server.scheduler.with_engine(
        "tiny-chat",
        lambda e: e.render(
            ChatCall.of(bodies.anthropic_messages("You are Claude Code.", messages))
        ),
    )
    assert SECRET in prompt
    without = [m for m in messages if m["role"] != "system"]
    counted = [
        claude.messages.count_tokens(model="tiny-chat", messages=m).input_tokens
        for m in (messages, without)
    ]
    assert counted[0] > counted[1]


def test_huge_output_limits_are_lowered_on_every_route(
    client: openai.OpenAI, claude: anthropic.Anthropic, server: Served
) -> None:
    hi = [{"role": "user", "content": "hello"}]
    chat = client.chat.completions.create(
        model="tiny-chat", messages=hi, max_tokens=32000, extra_body={"unknown_field": 1}
    )
    assert chat.choices[0].finish_reason in ("stop", "length")
    assert client.chat.completions.create(
        model="tiny-chat", messages=hi, max_completion_tokens=32000
    ).usage
    assert client.completions.create(model="tiny-chat", prompt="hello", max_tokens=32000)
    assert client.responses.create(
        model="tiny-chat",
        input="hello",
        max_output_tokens=32000,
        store=False,
        extra_body={"made_up": True},
    ).usage
    assert claude.messages.create(model="tiny-chat", max_tokens=32000, messages=hi).usage
    with ollama.Client(host=server.root, headers={"Authorization": f"Bearer {server.key}"}) as lama:
        assert lama.chat(model="tiny-chat", messages=hi, options={"num_predict": 32000}).done


def _long_prompt(server: Served, tokens: int) -> str:
    """User text whose chat prompt is about ``tokens`` tokens on the tiny model."""

    def count(text: str) -> int:
        return server.scheduler.with_engine(
            "tiny-chat",
            lambda e: len(e.prompt_tokens(e.render(ChatCall.of([Message("user", text)])))),
        )

    words = max(tokens - count(""), 1)
    text = "hello " * words
    while count(text) > tokens:
        text = text[6:]
    while count(text + "hello ") <= tokens:
        text += "hello "
    return text


def _error_message(route: str, body: dict[str, Any]) -> str:
    if route.startswith("/v1/messages"):
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
        return str(body["error"]["message"])
    if route.startswith("/api/"):
        return str(body["error"])
    assert body["error"]["code"] == "context_length_exceeded"
    return str(body["error"]["message"])


def test_a_prompt_that_cannot_fit_is_a_400_naming_both_numbers_on_every_route(
    server: Served, records: Records
) -> None:
    context = _context(server)
    text = "hello " * (context + 50)
    user = [{"role": "user", "content": text}]
    bodies = {
        "/v1/chat/completions": {"messages": user},
        "/v1/completions": {"prompt": text},
        "/v1/responses": {"input": text, "store": False},
        "/v1/messages": {"messages": user, "max_tokens": 10},
        "/api/chat": {"messages": user, "stream": False},
        "/api/generate": {"prompt": text, "stream": False},
    }
    headers = {"Authorization": f"Bearer {server.key}"}
    log = server.ctx.paths.log_dir / "access.log"
    for route, body in bodies.items():
        for stream in (False, True):
            reply = httpx.post(
                f"{server.root}{route}",
                headers=headers,
                timeout=60,
                json={"model": "tiny-chat", **body, "stream": stream},
            )
            assert reply.status_code == 400, (route, stream, reply.text)
            message = _error_message(route, reply.json())
            assert f"but the model's context is {context}" in message, message
            prompt_tokens = int(message.split("the prompt is ")[1].split(" ")[0])
            assert prompt_tokens > context
            record = records.of(reply)
            assert (
                record.route,
                record.status,
                record.error_code,
                record.error_type,
                record.tokens_in,
            ) == (route, 400, "context_length_exceeded", "invalid_request_error", prompt_tokens)
            assert "hello hello" not in log.read_text()  # never the content


def test_every_refusal_is_logged_with_its_code(server: Served, records: Records) -> None:
    reply = httpx.post(
        f"{server.url}/chat/completions",
        json={"model": "tiny-chat"},
        headers={"Authorization": "Bearer wrong"},
    )
    assert reply.status_code == 401
    assert records.of(reply).error_code == "invalid_api_key"
    reply = httpx.post(
        f"{server.url}/chat/completions",
        json={"model": "tiny-chat"},
        headers={"Authorization": f"Bearer {server.key}"},
    )
    assert (reply.status_code, records.of(reply).error_code) == (400, "invalid_value")
    reply = httpx.post(
        f"{server.url}/chat/completions",
        headers={"Authorization": f"Bearer {server.key}"},
        json={"model": "nope", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert (reply.status_code, records.of(reply).error_type) == (404, "invalid_request_error")


def test_an_answer_the_context_cut_says_so(
    client: openai.OpenAI, claude: anthropic.Anthropic, server: Served
) -> None:
    context = _context(server)
    text = _long_prompt(server, context - 2)  # room for at most two tokens
    responses = client.responses.with_raw_response.create(
        model="tiny-chat", input=text, store=False, temperature=0
    )
    reply = responses.parse()
    # Greedy, so the tiny model's answer is always the same: it runs into the context.
    assert reply.usage.total_tokens >= context
    assert reply.status == "incomplete"
    assert reply.incomplete_details.reason == "context_length_exceeded"
    assert responses.headers["x-edgedesk-context"] == str(context)
    message = claude.messages.create(
        model="tiny-chat",
        max_tokens=32000,
        messages=[{"role": "user", "content": text}],
        extra_body={"temperature": 0},
    )
    assert message.stop_reason == "model_context_window_exceeded"
    chat = client.chat.completions.create(
        model="tiny-chat", temperature=0, messages=[{"role": "user", "content": text}]
    )
    assert chat.choices[0].finish_reason == "length"
    # Streamed, the closing events say the same.
    events = list(
        client.responses.create(
            model="tiny-chat", input=text, store=False, temperature=0, stream=True
        )
    )
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "context_length_exceeded"
    with claude.messages.stream(
        model="tiny-chat",
        max_tokens=32000,
        messages=[{"role": "user", "content": text}],
        extra_body={"temperature": 0},
    ) as stream:
        assert stream.get_final_message().stop_reason == "model_context_window_exceeded"


def test_ollama_version_is_one_codex_accepts_and_a_setting(
    tmp_path: Path, tiny_chat: Path, server: Served
) -> None:
    assert httpx.get(f"{server.root}/api/version").json() == {"version": "0.13.5"}
    with serve(tmp_path / "v", [tiny_chat], ollama_version="0.14.2") as other:
        assert httpx.get(f"{other.root}/api/version").json() == {"version": "0.14.2"}
