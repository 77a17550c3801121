"""Hosted MCP tools in API requests: Anthropic ``mcp_servers`` and Responses ``mcp`` tools
run on a real stdio MCP server (the tests' calculator) by EdgeDesk's own tool loop, seen
through the official ``openai`` and ``anthropic`` clients against a real uvicorn; a
scripted engine makes the model's calls deterministic."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.server._asgi import services_for
from desktop.server._mcp.hosted import hosted
from desktop.server._runner import ServerRunner
from desktop.tools._call_log import ToolAudit
from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import McpPolicy, ServerList
from desktop.tools._toolbox import ToolBox
from tests.chat.scripted import Scripted
from tests.tools.conftest import SERVERS

MODEL = "scripted"
BETA = "mcp-client-2025-04-04"


def _call(name: str, **args: object) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {json.dumps(args)}}}</tool_call>'


class Models:
    """One model id, answered by the scripted engine."""

    def ids(self) -> list[str]:
        return [MODEL]

    def has(self, model: str) -> bool:
        return model == MODEL

    def kind(self, model: str) -> tuple[str, int | None]:
        return "chat", None

    def describe(self, model: str) -> dict[str, Any]:
        return {}

    def vision(self, model: str) -> bool:
        return False


class Engine(Scripted):
    """The scripted engine as the server's scheduler (nothing loaded to report)."""

    def loaded(self) -> list[Any]:
        return []


@dataclass
class Hosting:
    """A running server whose requests may name the ``calc`` MCP server."""

    engine: Engine
    runner: ServerRunner
    audit: Path

    @property
    def url(self) -> str:
        return self.runner.url

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url, api_key="none", max_retries=0, timeout=60)

    def anthropic(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.url.removesuffix("/v1"), api_key="none", max_retries=0, timeout=60
        )


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[McpClients]:
    made = McpClients(log_dir=tmp_path, token=lambda _n: None, call_timeout_s=20.0)
    yield made
    made.close()


def _servers(tmp_path: Path, policy: McpPolicy | None = None) -> ServerList:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {"mcpServers": {"calc": {"command": sys.executable, "args": [str(SERVERS), "calc"]}}}
        )
    )
    return ServerList(path, policy or McpPolicy())


def _serve(
    tmp_path: Path, clients: McpClients, engine: Engine, policy: McpPolicy | None = None
) -> ServerRunner:
    servers = _servers(tmp_path, policy)
    toolbox = ToolBox(servers, clients, ToolAudit(tmp_path / "tools.jsonl"))
    runner = ServerRunner(
        services_for(
            engine,
            Models(),
            ServerSettings().model_copy(update={"port": 0}),  # type: ignore[arg-type]
            None,
            tool_servers=servers,
            toolbox=toolbox,
        )
    )
    runner.start()
    return runner


@pytest.fixture
def hosting(tmp_path: Path, clients: McpClients) -> Iterator[Hosting]:
    engine = Engine(_call("add", a=2, b=40), "The sum is 42.")
    runner = _serve(tmp_path, clients, engine)
    try:
        yield Hosting(engine, runner, tmp_path / "tools.jsonl")
    finally:
        runner.stop()


def _fed_back(engine: Engine) -> None:
    """The model was offered the server's tools and read the real result next round."""
    assert engine.tools[0] is not None
    assert {t["function"]["name"] for t in engine.tools[0]} == {"add", "divide"}
    assert [m.content for m in engine.prompts[1] if m.role == "tool"] == ["42"]


def test_responses_mcp_tool_runs_on_the_server(hosting: Hosting) -> None:
    with hosting.openai() as client:
        response = client.responses.create(
            model=MODEL,
            input="What is 2+40?",
            tools=[
                {
                    "type": "mcp",
                    "server_label": "calc",
                    "server_url": "stdio://calc",
                    "require_approval": "never",
                }
            ],
        )
    kinds = [item.type for item in response.output]
    assert kinds == ["mcp_list_tools", "mcp_call", "message"]
    listing, call = response.output[0], response.output[1]
    assert listing.server_label == "calc"
    assert {t.name for t in listing.tools} == {"add", "divide"}
    assert (call.name, json.loads(call.arguments), call.output, call.error) == (
        "add",
        {"a": 2, "b": 40},
        "42",
        None,
    )
    assert response.output_text == "The sum is 42."
    _fed_back(hosting.engine)
    # The items sent back as the next turn's input re-render the call and its result.
    with hosting.openai() as client:
        client.responses.create(
            model=MODEL,
            input=[
                {"role": "user", "content": "What is 2+40?"},
                *[item.model_dump(exclude_none=True) for item in response.output],
                {"role": "user", "content": "Thanks"},
            ],
        )
    again = hosting.engine.prompts[-1]
    assert [(m.role, m.content) for m in again if m.role == "tool"] == [("tool", "42")]
    assert [c.name for m in again for c in m.tool_calls] == ["add"]
    assert (again[-2].role, again[-2].content) == ("assistant", "The sum is 42.")
    audited = [json.loads(line) for line in hosting.audit.read_text().splitlines()]
    assert [(a["tool"], a["server"], a["ok"]) for a in audited] == [("add", "calc", True)]


def test_responses_mcp_tool_streamed(hosting: Hosting) -> None:
    with hosting.openai() as client:
        stream = client.responses.create(
            model=MODEL,
            input="What is 2+40?",
            stream=True,
            tools=[{"type": "mcp", "server_label": "calc", "server_url": "stdio://calc"}],
        )
        events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.mcp_list_tools.completed" in kinds
    assert "response.mcp_call.completed" in kinds
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in done] == ["mcp_list_tools", "mcp_call", "message"]
    assert done[1].output == "42"
    words = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert words == "The sum is 42."
    final = events[-1].response  # type: ignore[union-attr]
    assert [i.type for i in final.output] == ["mcp_list_tools", "mcp_call", "message"]


def test_anthropic_mcp_servers_run_on_the_server(hosting: Hosting) -> None:
    with hosting.anthropic() as client:
        message = client.beta.messages.create(
            model=MODEL,
            max_tokens=64,
            betas=[BETA],
            messages=[{"role": "user", "content": "What is 2+40?"}],
            mcp_servers=[{"type": "url", "url": "https://calc.invalid/mcp", "name": "calc"}],
        )
    kinds = [block.type for block in message.content]
    assert kinds == ["mcp_tool_use", "mcp_tool_result", "text"]
    use, result, text = message.content
    assert (use.name, use.server_name, use.input) == ("add", "calc", {"a": 2, "b": 40})
    assert result.tool_use_id == use.id and result.is_error is False
    assert [c.text for c in result.content] == ["42"]
    assert text.text == "The sum is 42." and message.stop_reason == "end_turn"
    _fed_back(hosting.engine)
    # The assistant turn sent back as is re-renders the call, its result, then the words.
    with hosting.anthropic() as client:
        client.messages.create(
            model=MODEL,
            max_tokens=8,
            messages=[
                {"role": "user", "content": "What is 2+40?"},
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in message.content],
                },
                {"role": "user", "content": "Thanks"},
            ],
        )
    again = hosting.engine.prompts[-1]
    assert [(m.role, bool(m.tool_calls), m.content) for m in again] == [
        ("user", False, "What is 2+40?"),
        ("assistant", True, ""),
        ("tool", False, "42"),
        ("assistant", False, "The sum is 42."),
        ("user", False, "Thanks"),
    ]


def test_anthropic_mcp_servers_streamed(hosting: Hosting) -> None:
    with (
        hosting.anthropic() as client,
        client.beta.messages.stream(
            model=MODEL,
            max_tokens=64,
            betas=[BETA],
            messages=[{"role": "user", "content": "What is 2+40?"}],
            mcp_servers=[{"type": "url", "url": "https://calc.invalid/mcp", "name": "calc"}],
        ) as stream,
    ):
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
    assert message.content[0].input == {"a": 2, "b": 40}
    assert [c.text for c in message.content[1].content] == ["42"]
    assert message.content[2].text == "The sum is 42."


def test_a_failing_call_comes_back_as_an_error(tmp_path: Path, clients: McpClients) -> None:
    engine = Engine(_call("divide", a=1, b=0), "Cannot divide by zero.")
    runner = _serve(tmp_path, clients, engine)
    try:
        with openai.OpenAI(
            base_url=runner.url, api_key="none", max_retries=0, timeout=60
        ) as client:
            response = client.responses.create(
                model=MODEL,
                input="1/0?",
                tools=[{"type": "mcp", "server_label": "calc", "server_url": "stdio://calc"}],
            )
    finally:
        runner.stop()
    call = response.output[1]
    assert call.type == "mcp_call" and call.status == "failed" and call.output is None
    assert call.error is not None
    assert response.output_text == "Cannot divide by zero."


def test_required_approval_refuses_the_request_naming_the_policy(
    tmp_path: Path, clients: McpClients
) -> None:
    engine = Engine("unused")
    runner = _serve(tmp_path, clients, engine, McpPolicy(require_approval=True))
    try:
        with (
            openai.OpenAI(base_url=runner.url, api_key="none", max_retries=0, timeout=60) as client,
            pytest.raises(openai.BadRequestError) as err,
        ):
            client.responses.create(
                model=MODEL,
                input="hi",
                tools=[{"type": "mcp", "server_label": "calc", "server_url": "stdio://calc"}],
            )
        with (
            anthropic.Anthropic(
                base_url=runner.url.removesuffix("/v1"), api_key="none", max_retries=0
            ) as client,
            pytest.raises(anthropic.BadRequestError) as refused,
        ):
            client.beta.messages.create(
                model=MODEL,
                max_tokens=8,
                betas=[BETA],
                messages=[{"role": "user", "content": "hi"}],
                mcp_servers=[{"type": "url", "url": "https://c.invalid/mcp", "name": "calc"}],
            )
    finally:
        runner.stop()
    assert "McpRequireApproval" in str(err.value)
    assert "McpRequireApproval" in str(refused.value)
    assert engine.prompts == []  # nothing was generated


def test_not_configured_or_not_allowed_stays_a_400(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"wiki": {"url": "https://wiki.corp/mcp"}}}')
    locked = ServerList(path, McpPolicy(("search=https://search.corp/mcp",), allow_user=False))
    box = ToolBox(locked, McpClients(log_dir=tmp_path), ToolAudit(tmp_path / "t.jsonl"))
    with pytest.raises(Exception, match="'ghost' is not configured") as unknown:
        hosted([("ghost", "https://ghost/mcp")], locked, box, "mcp_servers")
    assert unknown.value.param == "mcp_servers"  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="AllowUserMcp is off"):
        hosted([("wiki", "https://wiki.corp/mcp")], locked, box, "tools")
    offline = ServerList(path, McpPolicy(offline=True))
    with pytest.raises(Exception, match="ForceOffline"):
        hosted([("wiki", None)], offline, box, "tools")
    allowed = hosted([("search", None)], locked, box, "tools")
    assert allowed.labels == {"search": "search"}
    assert allowed.toolbox.only == frozenset({"search"}) and not allowed.toolbox.builtins


def test_function_tools_beside_mcp_tools_are_refused(hosting: Hosting) -> None:
    with hosting.openai() as client, pytest.raises(openai.BadRequestError) as err:
        client.responses.create(
            model=MODEL,
            input="hi",
            tools=[
                {"type": "mcp", "server_label": "calc", "server_url": "stdio://calc"},
                {"type": "function", "name": "lookup", "parameters": {"type": "object"}},
            ],
        )
    assert "function tools and mcp tools" in str(err.value)
    assert hosting.engine.prompts == []
