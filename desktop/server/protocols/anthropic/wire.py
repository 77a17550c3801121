"""Pure translation of Anthropic Messages API requests into the engine's plain values.

Requests become the chat route's engine call (``chat_call``: messages, sampling, typed
tool specs, the thinking switch, a forced call), each bad field refused with its path
named.
Answers go the other way in ``events``. No I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from desktop.base.errors import InvalidRequest
from desktop.engine import (
    DEFAULT_LIMITS,
    ChatCall,
    GenerationParams,
    Image,
    ImageLimits,
    Message,
    ToolCall,
    ToolSpec,
)
from desktop.server import image_parts as images
from desktop.server import leniency, request_parts
from desktop.server.request_parts import (
    function_tool,
    only_tool,
    thinking_kwargs,
)

_REFUSED_BLOCKS = ("image", "document", "search_result", "container_upload")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CountTokensRequest(_Lenient):
    """``POST /v1/messages/count_tokens``; blocks are checked in ``to_messages``."""

    model: str = Field(min_length=1)
    messages: list[dict[str, Any]] = Field(min_length=1)
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None
    mcp_servers: list[dict[str, Any]] | None = None


class MessagesRequest(CountTokensRequest):
    """``POST /v1/messages``."""

    max_tokens: int = Field(ge=1)
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=1.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=1)
    stream: bool = False
    metadata: dict[str, Any] | None = None
    service_tier: str | None = None
    container: str | dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None


def refuse_unsupported(req: CountTokensRequest) -> None:
    """A 400 naming a field we know but cannot honour."""
    if isinstance(req, MessagesRequest) and req.container is not None:
        raise InvalidRequest(
            "container is not supported (no code execution here)", param="container"
        )


# ---------------------------------------------------------------- request → engine


def _param(where: str) -> str:
    """``messages[0].content[1]`` as the dotted ``param`` errors carry."""
    return re.sub(r"\[(\d+)\]", r".\1", where)


def _blocks(content: object, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise InvalidRequest(
            f"{where}.content must be a string or a list of blocks",
            param=_param(f"{where}.content"),
        )
    return content


def _block_text(block: dict[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise InvalidRequest(f"{where}.{key} must be a string", param=_param(f"{where}.{key}"))
    return value


def _refuse_block(kind: object, where: str) -> InvalidRequest:
    hint = (
        " (images go in user messages, beside their text)"
        if kind == "image"
        else " (documents are not supported by the local models)"
        if kind in _REFUSED_BLOCKS
        else ""
    )
    return InvalidRequest(
        f"{where}: content block type '{kind}' is not supported here{hint}",
        param=_param(f"{where}.type"),
    )


def system_text(system: str | list[dict[str, Any]] | None) -> str:
    """``system`` as one text (a list's text blocks joined)."""
    if system is None or isinstance(system, str):
        return system or ""
    parts = []
    for j, block in enumerate(system):
        if block.get("type") != "text":
            raise _refuse_block(block.get("type"), f"system[{j}]")
        parts.append(_block_text(block, "text", f"system[{j}]"))
    return "\n".join(parts)


def _tool_result(block: dict[str, Any], where: str) -> str:
    return _tool_result_pictured(block, where, pictures=False)[0]


def _tool_result_pictured(
    block: dict[str, Any],
    where: str,
    *,
    pictures: bool = True,
    limits: ImageLimits = DEFAULT_LIMITS,
) -> tuple[str, tuple[Image, ...]]:
    """A tool result's text, and its pictures where they may be (a screenshot a tool
    returned, as Claude Code sends an image file it read)."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content, ()
    texts: list[str | Image] = []
    for j, part in enumerate(_blocks(content, where)):
        at = f"{where}.content[{j}]"
        if pictures and part.get("type") == "image":
            texts.append(image_block(part, at, limits))
            continue
        if part.get("type") != "text":
            raise _refuse_block(part.get("type"), at)
        texts.append(_block_text(part, "text", at))
    return images.joined(texts, "\n")


def image_block(block: dict[str, Any], where: str, limits: ImageLimits = DEFAULT_LIMITS) -> Image:
    """An ``image`` block's picture: a ``base64`` source (a ``url`` one is not fetched)."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, dict) else None
    param = _param(f"{where}.source")
    if kind == "base64" and isinstance(source, dict):
        return images.image_from_base64(
            source.get("data"), where=where, param=param + ".data", limits=limits
        )
    if kind == "url" and isinstance(source, dict):
        return images.image_from_url(
            source.get("url"), where=where, param=param + ".url", limits=limits
        )
    raise InvalidRequest(
        f"{where}.source must be {{'type': 'base64', 'media_type': …, "
        f"'data': …}} (source type '{kind}' is not supported here)",
        param=param,
    )


def _user_turn(
    blocks: list[dict[str, Any]], where: str, names: dict[str, str], limits: ImageLimits
) -> list[Message]:
    out: list[Message] = []
    texts: list[str | Image] = []
    for j, block in enumerate(blocks):
        kind, at = block.get("type"), f"{where}.content[{j}]"
        if kind == "text":
            texts.append(_block_text(block, "text", at))
        elif kind == "image":
            texts.append(image_block(block, at, limits))
        elif kind == "tool_result":
            call_id = _block_text(block, "tool_use_id", at)
            result, pictures = _tool_result_pictured(block, at, limits=limits)
            out.append(
                Message(
                    "tool", result, tool_call_id=call_id, name=names.get(call_id), images=pictures
                )
            )
        else:
            raise _refuse_block(kind, at)
    if texts:
        text, pictures = images.joined(texts, "\n")
        out.append(Message("user", text, images=pictures))
    return out


def _assistant_turn(
    blocks: list[dict[str, Any]], where: str, names: dict[str, str]
) -> list[Message]:
    """The turn's messages: one, or (hosted MCP rounds) each round's calls and results,
    then the words that followed."""
    out: list[Message] = []
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(blocks):
        kind, at = block.get("type"), f"{where}.content[{j}]"
        if kind == "text":
            texts.append(_block_text(block, "text", at))
        elif kind == "thinking":
            thoughts.append(_block_text(block, "thinking", at))
        elif kind == "redacted_thinking":
            continue  # encrypted by Anthropic: nothing a local model can read
        elif kind == "mcp_tool_result":  # EdgeDesk ran the call: the round ends here
            if calls or texts or thoughts:
                out.append(
                    Message(
                        "assistant",
                        "".join(texts),
                        tool_calls=tuple(calls),
                        reasoning="".join(thoughts) or None,
                    )
                )
                texts, thoughts, calls = [], [], []
            call_id = _block_text(block, "tool_use_id", at)
            out.append(
                Message(
                    "tool", _tool_result(block, at), tool_call_id=call_id, name=names.get(call_id)
                )
            )
        elif kind in ("tool_use", "mcp_tool_use"):
            arguments = block.get("input", {})
            if not isinstance(arguments, dict):
                raise InvalidRequest(f"{at}.input must be an object", param=_param(f"{at}.input"))
            call = ToolCall(
                _block_text(block, "id", at),
                _block_text(block, "name", at),
                json.dumps(arguments, ensure_ascii=False),
            )
            names[call.id] = call.name
            calls.append(call)
        else:
            raise _refuse_block(kind, at)
    if texts or thoughts or calls or not out:
        out.append(
            Message(
                "assistant",
                "".join(texts),
                tool_calls=tuple(calls),
                reasoning="".join(thoughts) or None,
            )
        )
    return out


def _system_turn(blocks: list[dict[str, Any]], where: str) -> Message:
    """A ``system`` message inside ``messages`` (Claude Code's reminders): its text."""
    texts = []
    for j, block in enumerate(blocks):
        if block.get("type") != "text":
            raise _refuse_block(block.get("type"), f"{where}.content[{j}]")
        texts.append(_block_text(block, "text", f"{where}.content[{j}]"))
    return Message("system", "\n".join(texts))


def to_messages(
    system: str | list[dict[str, Any]] | None,
    messages: Sequence[dict[str, Any]],
    *,
    limits: ImageLimits = DEFAULT_LIMITS,
) -> list[Message]:
    """The conversation as engine messages (tool results become tool turns; pictures
    over ``limits`` are a 400).

    A ``system`` message among them (Claude Code sends reminders so) stays a system turn
    where it stands; the chat template renders it, or the engine folds it into the user
    turn beside it when the template has no place for it (``fold_system_turns``).
    """
    text = system_text(system)
    out: list[Message] = [Message("system", text)] if text else []
    names: dict[str, str] = {}
    for i, message in enumerate(messages):
        where, role = f"messages[{i}]", message.get("role")
        blocks = _blocks(message.get("content"), where)
        if role == "user":
            out += _user_turn(blocks, where, names, limits)
        elif role == "assistant":
            out += _assistant_turn(blocks, where, names)
        elif role == "system":
            out.append(_system_turn(blocks, where))
        else:
            raise InvalidRequest(
                f"{where}.role must be 'user', 'assistant' or 'system'", param=f"messages.{i}.role"
            )
    if messages and messages[-1].get("role") == "assistant":
        raise InvalidRequest(
            "a final assistant message (prefill) is not supported; end with a user message",
            param=f"messages.{len(messages) - 1}",
        )
    if not any(m.role != "system" for m in out):
        raise InvalidRequest("messages has no user message to answer", param="messages")
    return out


# Client tools have no ``type`` (or ``custom``); every typed tool is one Anthropic defines
# (web_search_…, web_fetch_…, code_execution_…, bash_…, text_editor_…, computer_…,
# mcp_toolset, memory_…): the model is trained on their schemas, which a local model
# never saw, and the server ones run on Anthropic's side. All are left out.
_CLIENT_TOOL_TYPES = (None, "custom")


def left_out_tools(req: CountTokensRequest) -> list[leniency.Hosted]:
    """The tools (and MCP servers) this server does not run, left out of the prompt."""
    left = leniency.split_tools(req.tools, _CLIENT_TOOL_TYPES)[1]
    servers = [
        leniency.Hosted("mcp_servers", s.get("name") if isinstance(s.get("name"), str) else None)
        for s in req.mcp_servers or ()
        if isinstance(s, dict)
    ]
    return left + servers


def tools_for_engine(req: CountTokensRequest) -> tuple[ToolSpec, ...] | None:
    """Client tools as the engine offers them (a named choice offers only it)."""
    kept, left = leniency.split_tools(req.tools, _CLIENT_TOOL_TYPES)
    tools: list[ToolSpec] = []
    for i, tool in kept:
        if not isinstance(tool, dict):
            raise InvalidRequest(f"tools[{i}] must be an object", param=f"tools.{i}")
        tools.append(
            function_tool(
                tool.get("name"), tool.get("description"), tool.get("input_schema"), f"tools[{i}]"
            )
        )
    kind = _choice(req)
    name = (req.tool_choice or {}).get("name") if kind == "tool" else None
    if isinstance(name, str) and not any(t.name == name for t in tools):
        leniency.refuse_forced(name, left, "tool_choice.name")
    if not tools or kind == "none":
        if kind in ("any", "tool"):
            leniency.refuse_nothing_to_force(left)
        return None
    if kind == "tool":
        if not isinstance(name, str):
            raise InvalidRequest(
                "tool_choice of type 'tool' needs a name", param="tool_choice.name"
            )
        return only_tool(tools, name, "tool_choice.name")
    return tuple(tools)


def _choice(req: CountTokensRequest) -> str:
    if req.tool_choice is None:
        return "auto"
    kind = req.tool_choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise InvalidRequest(
            "tool_choice.type must be auto, any, tool or none", param="tool_choice.type"
        )
    return str(kind)


def is_forced(req: CountTokensRequest) -> bool:
    """Whether the answer must be a tool call (``any`` or a named ``tool``)."""
    functions = leniency.split_tools(req.tools, _CLIENT_TOOL_TYPES)[0]
    return (
        bool(functions)
        and req.tool_choice is not None
        and req.tool_choice.get("type") in ("any", "tool")
    )


def template_kwargs(req: CountTokensRequest) -> dict[str, Any] | None:
    """``thinking`` as the thinking switch (``budget_tokens`` is not enforced)."""
    if req.thinking is None:
        return None
    kind = req.thinking.get("type")
    if kind not in ("enabled", "disabled", "adaptive", "between_tools"):
        raise InvalidRequest("thinking.type must be 'enabled' or 'disabled'", param="thinking.type")
    return thinking_kwargs(kind != "disabled")


def generation_params(
    req: MessagesRequest, limits: request_parts.Limits, tools: Sequence[ToolSpec] | None
) -> GenerationParams:
    """Sampling (Anthropic's default temperature 1; a forced call is grammar-constrained)."""
    stops = tuple(s for s in req.stop_sequences or () if s)
    schema = output_schema(req)
    if schema is not None and is_forced(req):
        raise InvalidRequest(
            "a forced tool_choice cannot be combined with output_config.format", param="tool_choice"
        )
    return GenerationParams(
        # Required by the protocol, and clients ask for far more than they expect (Claude
        # Code sends 32000): lowered to the server's limit rather than refused; reaching
        # it still says stop_reason "max_tokens".
        max_tokens=leniency.capped_max_tokens(req.max_tokens, limits.max_tokens),
        temperature=1.0 if req.temperature is None else req.temperature,
        top_p=1.0 if req.top_p is None else req.top_p,
        top_k=40 if req.top_k is None else req.top_k,
        stop=stops,
        timeout_s=limits.timeout_s,
        json_schema=(
            request_parts.forced_call_schema(tools) if tools and is_forced(req) else schema
        ),
    )


def chat_call(
    req: MessagesRequest, messages: Sequence[Message], limits: request_parts.Limits
) -> ChatCall:
    """The engine's call for a message (``messages``: its ``to_messages``): client tools,
    sampling (a forced call grammar-constrained), the thinking switch, the forced call."""
    tools = tools_for_engine(req)
    params = generation_params(req, limits, tools)
    return ChatCall.of(messages, params, tools, template_kwargs(req), forced=is_forced(req))


def count_call(req: CountTokensRequest, messages: Sequence[Message]) -> ChatCall:
    """The call whose prompt ``count_tokens`` counts: messages, tools, thinking switch."""
    return ChatCall.of(messages, tools=tools_for_engine(req), template_kwargs=template_kwargs(req))


def output_schema(req: MessagesRequest) -> str | None:
    """``output_config.format`` (structured output) as JSON schema text, enforced by grammar."""
    fmt = (req.output_config or {}).get("format")
    if fmt is None:
        return None
    if (
        not isinstance(fmt, dict)
        or fmt.get("type") != "json_schema"
        or not isinstance(fmt.get("schema"), dict)
    ):
        raise InvalidRequest(
            "output_config.format must be {'type': 'json_schema', 'schema': {...}}",
            param="output_config.format",
        )
    return json.dumps(fmt["schema"])
