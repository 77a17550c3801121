"""Hosted MCP tools in an API request (Anthropic ``mcp_servers``, Responses ``mcp`` tools):
EdgeDesk runs the tool loop itself, on the MCP servers the request names, when each is
configured on this machine and allowed by policy.

The loop is the conversation core's (``ChatCore.drive``): the model is offered the named
servers' tools, its calls run on those servers through the same MCP client and audit log
as a chat's, their results go back to the model, up to the step limit. The request naming
a server is its consent to that server's calls; policy ``McpRequireApproval`` wants a
person to approve each call, which an API request cannot do, so it is then refused.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypedDict

from desktop.base.errors import InvalidRequest
from desktop.chat import ChatCore, ChatStreamer, Conversation, Decision, PendingTurn, ToolStep, Turn
from desktop.engine import ChatCall, Delta, ToolCall
from desktop.tools import ServerConfig, ServerList, ToolBox, ToolSet, ToolSpec

Event = ToolSet | ToolStep | Delta  # the listing first, then words and rounds, final last


@dataclass(frozen=True)
class Hosted:
    """The MCP servers one request may call: a toolbox limited to them, and the label the
    request gave each (by configured name)."""

    toolbox: ToolBox
    labels: dict[str, str]

    def label(self, server: str) -> str:
        """The request's label for the configured server ``server``."""
        return self.labels.get(server, server)


def hosted(
    requested: Sequence[tuple[object, object]],
    servers: ServerList | None,
    toolbox: ToolBox | None,
    param: str,
) -> Hosted:
    """The servers a request names (label, URL), or the 400 saying which one cannot run
    and whether the configuration, the policy or McpRequireApproval stands in the way."""
    labels: dict[str, str] = {}
    for name, url in requested:
        label = str(name or url or "?")
        config: ServerConfig | None = None
        if servers is not None:
            config = next(
                (s for s in servers.all() if s.name == name or (url and s.url == url)), None
            )
        if config is None:
            raise InvalidRequest(
                f"the MCP server '{label}' is not configured on this machine (policy "
                "McpServers or 'edgedesk tools add'); MCP servers named in a request are "
                "not connected to",
                param=param,
            )
        assert servers is not None
        reason = servers.refusal(config)
        if reason is not None:
            raise InvalidRequest(reason, param=param)
        labels[config.name] = label
    if toolbox is None:
        raise InvalidRequest(
            "this server was started without MCP tool servers; offer "
            "their tools as function tools and run them in the client",
            param=param,
        )
    if toolbox.require_approval:
        raise InvalidRequest(
            "policy McpRequireApproval makes every MCP tool call wait for a person's "
            "approval, which an API request cannot give; use the tools in an EdgeDesk "
            "chat, or offer them as function tools and run them in the client",
            param=param,
        )
    return Hosted(toolbox.limited(labels), labels)


def alone(hosting: Hosted | None, tools: object, kinds: str) -> None:
    """Refuse (400) a request that offers its own tools beside the MCP servers it names:
    one loop runs either kind, not both; ``kinds`` names both in the request's words."""
    if hosting is not None and tools:
        raise InvalidRequest(
            f"{kinds} in one request are not supported here; send one kind", param="tools"
        )


def _allow(_spec: ToolSpec, _call: ToolCall) -> Decision:
    return "once"  # the request named the server: its consent (McpRequireApproval refused)


def run(
    streamer: ChatStreamer,
    tools: ToolBox,
    model: str,
    call: ChatCall,
    *,
    cancel: threading.Event,
) -> Iterator[Event]:
    """The tool loop of one request, as it happens: the tools offered (a ToolSet), the
    words of each reply (non-final Chunks), each finished round (ToolStep), then the final
    Delta. Blocks; the loop runs on its own thread, ended (``cancel``) when the caller
    stops reading."""
    out: queue.Queue[Event | BaseException | None] = queue.Queue()
    core = ChatCore(streamer, tools=tools)
    pending = PendingTurn(
        Conversation(model=model),
        Turn("assistant", ""),
        list(call.messages),
        call.params,
        call.template_kwargs,
        0,
    )
    finals: list[Delta] = []

    def work() -> None:
        try:
            out.put(tools.available())
            finals.append(
                core.drive(
                    pending,
                    lambda c: out.put(replace(c, finish_reason=None, usage=None)),
                    cancel,
                    approve=_allow,
                    on_step=out.put,
                )
            )
            out.put(None)
        except BaseException as exc:  # handed to the reading thread, raised there
            out.put(exc)

    thread = threading.Thread(target=work, name="hosted-mcp", daemon=True)
    thread.start()
    try:
        while (item := out.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
        yield replace(finals[0], text="", reasoning="")
    finally:
        cancel.set()  # a reader that stops early stops the loop too


def tool_name(step_call: ToolCall, tools: ToolSet) -> tuple[str, str]:
    """The configured server and the server's own name of the tool a call named."""
    spec = tools.specs.get(step_call.name)
    if spec is None:
        return "", step_call.name
    return spec.server, step_call.name.removeprefix(f"{spec.server}__")


def arguments(call: ToolCall) -> dict[str, object]:
    """A call's arguments as an object ({} when they were not one)."""
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------ Responses items
class ListedTool(TypedDict):
    """One tool of an ``mcp_list_tools`` item."""

    name: str
    description: str | None
    input_schema: dict[str, Any]  # the JSON Schema the MCP server gave
    annotations: None


class McpListTools(TypedDict):
    """The Responses ``mcp_list_tools`` output item: a server's tools, or why none."""

    type: Literal["mcp_list_tools"]
    id: str
    server_label: str
    tools: list[ListedTool]
    error: str | None


class TextContent(TypedDict):
    """``{"type": "text", "text": …}``: a tool's words, in both protocols' shape."""

    type: Literal["text"]
    text: str


class McpError(TypedDict):
    """An ``mcp_call``'s error: the tool's words."""

    type: Literal["mcp_tool_execution_error"]
    content: list[TextContent]


class McpCall(TypedDict):
    """The Responses ``mcp_call`` output item: one call EdgeDesk ran, and its outcome."""

    type: Literal["mcp_call"]
    id: str
    server_label: str
    name: str
    arguments: str
    output: str | None
    error: McpError | None
    status: Literal["in_progress", "completed", "failed"]
    approval_request_id: None


def list_items(response_id: str, hosted_: Hosted, tools: ToolSet) -> list[McpListTools]:
    """One ``mcp_list_tools`` item per named server (its tools, or why none)."""
    items: list[McpListTools] = []
    for n, server in enumerate(hosted_.labels):
        listed: list[ListedTool] = [
            {
                "name": s.name.removeprefix(f"{server}__"),
                "description": s.description,
                "input_schema": s.parameters or {"type": "object", "properties": {}},
                "annotations": None,
            }
            for s in tools.specs.values()
            if s.server == server
        ]
        error = None if listed else next((p for p in tools.problems if server in p), None)
        items.append(
            {
                "type": "mcp_list_tools",
                "id": f"mcpl_{response_id}_{n}",
                "server_label": hosted_.label(server),
                "tools": listed,
                "error": error,
            }
        )
    return items


def call_items(
    response_id: str, hosted_: Hosted, tools: ToolSet, step: ToolStep, first: int
) -> list[McpCall]:
    """One ``mcp_call`` item per call of a round (numbered from ``first``)."""
    items: list[McpCall] = []
    for n, (call, outcome) in enumerate(zip(step.calls, step.results, strict=True)):
        server, name = tool_name(call, tools)
        ok = outcome.status == "ok"
        items.append(
            {
                "type": "mcp_call",
                "id": f"mcp_{response_id}_{first + n}",
                "server_label": hosted_.label(server or outcome.server),
                "name": name,
                "arguments": call.arguments or "{}",
                "output": outcome.text if ok else None,
                "error": None
                if ok
                else {
                    "type": "mcp_tool_execution_error",
                    "content": [{"type": "text", "text": outcome.text}],
                },
                "status": "completed" if ok else "failed",
                "approval_request_id": None,
            }
        )
    return items


# ------------------------------------------------------------------ Anthropic blocks
class McpToolUse(TypedDict):
    """Anthropic's ``mcp_tool_use`` block: a call EdgeDesk ran."""

    type: Literal["mcp_tool_use"]
    id: str
    name: str
    server_name: str
    input: dict[str, object]  # the call's arguments: any JSON object


class McpToolResult(TypedDict):
    """Anthropic's ``mcp_tool_result`` block: that call's outcome."""

    type: Literal["mcp_tool_result"]
    tool_use_id: str
    is_error: bool
    content: list[TextContent]


def anthropic_blocks(
    message_id: str, hosted_: Hosted, tools: ToolSet, step: ToolStep, first: int
) -> list[TextContent | McpToolUse | McpToolResult]:
    """A round as ``mcp_tool_use`` / ``mcp_tool_result`` content blocks (after its words)."""
    blocks: list[TextContent | McpToolUse | McpToolResult] = []
    if step.content:
        blocks.append({"type": "text", "text": step.content})
    for n, (call, outcome) in enumerate(zip(step.calls, step.results, strict=True)):
        server, name = tool_name(call, tools)
        use_id = f"mcptoolu_{message_id.removeprefix('msg_')}_{first + n}"
        blocks.append(
            {
                "type": "mcp_tool_use",
                "id": use_id,
                "name": name,
                "server_name": hosted_.label(server or outcome.server),
                "input": arguments(call),
            }
        )
        blocks.append(
            {
                "type": "mcp_tool_result",
                "tool_use_id": use_id,
                "is_error": outcome.status != "ok",
                "content": [{"type": "text", "text": outcome.text}],
            }
        )
    return blocks


@dataclass
class Collected:
    """A whole hosted-tool answer: the tools offered, each round, the answer's own words."""

    tools: ToolSet
    steps: list[ToolStep]
    text: str
    reasoning: str
    final: Delta


def collect(events: Iterator[Event]) -> Collected:
    """Read a loop to its end (blocks)."""
    found = Collected(ToolSet(), [], "", "", Delta(finish_reason="stop"))
    text: list[str] = []
    reasoning: list[str] = []
    for event in events:
        if isinstance(event, ToolSet):
            found.tools = event
        elif isinstance(event, ToolStep):
            found.steps.append(event)
            text.clear()  # the words shown so far were the round's
            reasoning.clear()
        elif event.is_final:
            found.final = event
        else:
            text.append(event.text)
            reasoning.append(event.reasoning)
    found.text, found.reasoning = "".join(text), "".join(reasoning)
    return found


class Counted:
    """The scheduler's ``stream_chat``, each reply's chunks passed through ``wrap`` (the
    access log's bookkeeping)."""

    def __init__(self, streamer: ChatStreamer, wrap: Any) -> None:
        self._streamer = streamer
        self._wrap = wrap

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """One reply of the model, counted."""
        counted: Iterator[Delta] = self._wrap(self._streamer.stream_chat(model, call, cancel))
        return counted
