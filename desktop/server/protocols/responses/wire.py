"""Pure translation of an OpenAI Responses API request into the engine's plain values.

Promises the request schema, the refusal of what we do not support (naming the field),
and the same ``ChatCall`` the chat route makes (``chat_call``: messages, sampling,
typed tool specs, template switches, a forced call). The answer's side is
``output`` (output objects) and ``events`` (the stream). No I/O:
the route (``routes.py``) runs the engine and the store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

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
from desktop.server.protocols.responses import namespaces as tool_namespaces
from desktop.server.protocols.responses.namespaces import Namespaced
from desktop.server.request_parts import (
    function_tool,
    only_tool,
    thinking_kwargs,
)

ACCEPTED_INCLUDES = frozenset({"reasoning.encrypted_content"})  # ours is plain text anyway

# ---------------------------------------------------------------- request body


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TextFormat(_Lenient):
    """``text.format``: plain text, any JSON object, or JSON matching a schema."""

    type: Literal["text", "json_object", "json_schema"] = "text"
    name: str | None = None
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class TextConfig(_Lenient):
    """``text``: the output format (``verbosity`` is accepted and ignored)."""

    format: TextFormat | None = None
    verbosity: str | None = None


class ReasoningConfig(_Lenient):
    """``reasoning``: whether a thinking model thinks (``effort``); summaries are not made."""

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    summary: str | None = None
    generate_summary: str | None = None


class ResponsesRequest(_Lenient):
    """``POST /v1/responses``; items of ``input`` are checked in ``to_messages``."""

    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: Literal["none", "auto", "required"] | dict[str, Any] | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    text: TextConfig | None = None
    reasoning: ReasoningConfig | None = None
    store: bool | None = None
    previous_response_id: str | None = Field(default=None, min_length=1, max_length=200)
    stream: bool = False
    metadata: dict[str, str] | None = None
    parallel_tool_calls: bool | None = None
    user: str | None = None
    include: list[str] | None = None
    background: bool | None = None
    conversation: str | dict[str, Any] | None = None
    prompt: dict[str, Any] | None = None
    truncation: Literal["auto", "disabled"] | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    max_tool_calls: int | None = Field(default=None, ge=1)


def refuse_unsupported(req: ResponsesRequest) -> None:
    """A 400 naming the first field we know but cannot honour."""
    refusals = (
        (
            req.background,
            "background",
            "background responses are not supported; send the request and wait, or stream it",
        ),
        (
            req.conversation is not None,
            "conversation",
            "conversation objects are not "
            "supported; use previous_response_id or send the items in input",
        ),
        (
            req.prompt is not None,
            "prompt",
            "stored prompt templates are not supported; send instructions and input",
        ),
        (
            req.truncation == "auto",
            "truncation",
            "truncation 'auto' is not supported; the "
            "conversation is never cut silently (a prompt that does not fit gets a 400)",
        ),
        (
            bool(req.top_logprobs),
            "top_logprobs",
            "top_logprobs is not supported on "
            "/v1/responses; use /v1/chat/completions with logprobs",
        ),
    )
    for refused, param, message in refusals:
        if refused:
            raise InvalidRequest(message, param=param)
    for i, name in enumerate(req.include or ()):
        if name not in ACCEPTED_INCLUDES:
            raise InvalidRequest(f"include '{name}' is not supported", param=f"include.{i}")


# ---------------------------------------------------------------- input → engine


def input_items(value: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``input`` as items (a string is one user message)."""
    if isinstance(value, str):
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": value}]}
        ]
    return list(value)


def _param(where: str) -> str:
    """``input[0].content[1]`` as the dotted ``param`` errors carry."""
    return re.sub(r"\[(\d+)\]", r".\1", where)


def _text(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidRequest(
            f"{where}.content must be a string or a list of parts", param=_param(f"{where}.content")
        )
    parts: list[str] = []
    for j, part in enumerate(content):
        got = part if isinstance(part, dict) else {}
        kind = got.get("type")
        key = "refusal" if kind == "refusal" else "text"
        if kind in (
            "input_text",
            "output_text",
            "text",
            "summary_text",
            "reasoning_text",
            "refusal",
        ) and isinstance(got.get(key), str):
            parts.append(got[key])
        else:
            raise InvalidRequest(
                f"{where}.content[{j}]: part type '{kind}' is not supported; send text parts only",
                param=_param(f"{where}.content.{j}"),
            )
    return "".join(parts)


def _string(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidRequest(
            f"{where}.{key} must be a non-empty string", param=_param(f"{where}.{key}")
        )
    return value


def _arguments(item: dict[str, Any], where: str) -> str:
    raw = item.get("arguments", "{}")
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"{where}.arguments must be a JSON object in a string",
            param=_param(f"{where}.arguments"),
        )
    return str(raw)


_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def _message(
    item: dict[str, Any], where: str, i: int, reasoning: str | None, limits: ImageLimits
) -> Message:
    role = _ROLES.get(str(item.get("role")))
    if role is None:
        raise InvalidRequest(
            f"{where}.role must be user, assistant, system or developer", param=f"input.{i}.role"
        )
    content = item.get("content")
    if role == "user" and _has_images(content):
        text, pictures = _pictured(content, where, limits)  # type: ignore[arg-type]
        return Message("user", text, images=pictures)
    text = _text(content, where)
    if role == "assistant":
        return Message("assistant", text, reasoning=reasoning)
    return Message(role, text)  # type: ignore[arg-type]


def _has_images(content: object) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "input_image" for p in content
    )


def _pictured(
    content: list[object], where: str, limits: ImageLimits
) -> tuple[str, tuple[Image, ...]]:
    """A user message's text and its ``input_image`` parts, each marked where it stood.

    ``image_url`` is a data URL (or bare base64, as some clients send it); a ``file_id``
    names an upload this server does not keep, and is refused.
    """
    pieces: list[str | Image] = []
    for j, part in enumerate(content):
        at = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if (
            isinstance(part, dict)
            and kind in ("input_text", "text")
            and isinstance(part.get("text"), str)
        ):
            pieces.append(part["text"])
            continue
        if not isinstance(part, dict) or kind != "input_image":
            raise InvalidRequest(
                f"{at}: part type '{kind}' is not supported in a user "
                "message; send input_text or input_image parts",
                param=_param(at),
            )
        url = part.get("image_url")
        if url is None:
            what = (
                "file_id (uploaded files are not kept here)"
                if part.get("file_id")
                else "no image_url"
            )
            raise InvalidRequest(
                f"{at}: input_image has {what}; send the picture as a data URL in image_url",
                param=_param(f"{at}.image_url"),
            )
        if isinstance(url, str) and not url.lower().startswith(("data:", "http:", "https:")):
            pieces.append(
                images.image_from_base64(
                    url, where=at, limits=limits, param=_param(f"{at}.image_url")
                )
            )
        else:
            pieces.append(
                images.image_from_url(url, where=at, limits=limits, param=_param(f"{at}.image_url"))
            )
    return images.joined(pieces)


def _hosted_item(item: dict[str, Any], where: str, reasoning: str | None) -> list[Message]:
    """A hosted MCP item EdgeDesk returned: a call with its answer (a listing: nothing,
    it is what the model was offered, not a turn of the conversation)."""
    if item.get("type") != "mcp_call":
        return []
    call = ToolCall(
        _string(item, "id", where), _string(item, "name", where), _arguments(item, where)
    )
    result = item.get("output")
    if not isinstance(result, str):
        result = "error: " + json.dumps(item.get("error"), ensure_ascii=False)
    return [
        Message("assistant", "", tool_calls=(call,), reasoning=reasoning),
        Message("tool", result, tool_call_id=call.id, name=call.name),
    ]


def _tool_output(
    item: dict[str, Any], where: str, names: dict[str, str], limits: ImageLimits
) -> Message:
    """A ``function_call_output`` as the tool message it answers; an output given as
    parts may hold pictures (Codex's ``view_image`` returns the picture it read)."""
    call_id = _string(item, "call_id", where)
    output = item.get("output", "")
    pictures: tuple[Image, ...] = ()
    if isinstance(output, list) and _has_images(output):
        text, pictures = _pictured(output, where + ".output", limits)
    else:
        text = output if isinstance(output, str) else _text(output, where + ".output")
    return Message("tool", text, tool_call_id=call_id, name=names.get(call_id), images=pictures)


def to_messages(
    instructions: str | None,
    items: Sequence[object],
    spaces: Namespaced | None = None,
    *,
    limits: ImageLimits = DEFAULT_LIMITS,
) -> list[Message]:
    """The conversation as engine messages: instructions first, items in order
    (pictures over ``limits`` are a 400).

    A ``function_call`` with a ``namespace`` (Codex's call of a tool in a namespace) is
    the flat name the model was shown (``spaces``, else ``tool_namespaces.flat_name``).
    """
    out: list[Message] = [Message("system", instructions)] if instructions else []
    reasoning: str | None = None  # a reasoning item belongs to the assistant turn after it
    names: dict[str, str] = {}
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise InvalidRequest(f"{where} must be an object", param=f"input.{i}")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            out.append(_message(item, where, i, reasoning, limits))
            reasoning = None if out[-1].role == "assistant" else reasoning
        elif kind == "function_call":
            call = ToolCall(
                _string(item, "call_id", where),
                _call_name(item, where, spaces or Namespaced()),
                _arguments(item, where),
            )
            names[call.id] = call.name
            last = out[-1] if out else None
            if last is not None and last.role == "assistant" and reasoning is None:
                out[-1] = replace(last, tool_calls=(*last.tool_calls, call))
            else:
                out.append(Message("assistant", "", tool_calls=(call,), reasoning=reasoning))
                reasoning = None
        elif kind == "function_call_output":
            out.append(_tool_output(item, where, names, limits))
        elif kind in ("mcp_call", "mcp_list_tools"):
            out += _hosted_item(item, where, reasoning)
            reasoning = None if kind == "mcp_call" else reasoning
        elif kind == "reasoning":
            parts = item.get("content") or item.get("summary") or []
            reasoning = _text(parts, where) or None
        else:
            raise InvalidRequest(
                f"{where}: item type '{kind}' is not supported; send "
                "message, function_call, function_call_output, reasoning or "
                "mcp_call items",
                param=f"input.{i}.type",
            )
    if not any(m.role != "system" for m in out):
        raise InvalidRequest("input has no message to answer", param="input")
    return out


# ---------------------------------------------------------------- Codex namespaces


def _call_name(item: dict[str, Any], where: str, spaces: Namespaced) -> str:
    name = _string(item, "name", where)
    namespace = item.get("namespace")
    return spaces.join(namespace, name) if isinstance(namespace, str) and namespace else name


def flatten_namespaces(req: ResponsesRequest) -> tuple[ResponsesRequest, Namespaced]:
    """The request with its ``namespace`` tools flattened into function tools (and its
    ``tool_choice`` renamed to match), and the map back to (namespace, name).

    The request itself when it has no namespace. Codex expects a call of a namespaced
    tool as a ``function_call`` with the tool's own ``name`` and the ``namespace``
    (``output.call_item``); see ``tool_namespaces``.
    """
    flat = tool_namespaces.flatten_namespaces(req.tools, req.tool_choice)
    if flat.tools is req.tools:  # nothing to flatten: the very same request
        return req, flat.spaces
    update = {"tools": flat.tools, "tool_choice": flat.tool_choice}
    return req.model_copy(update=update), flat.spaces


# ---------------------------------------------------------------- tools and sampling


def left_out_tools(req: ResponsesRequest) -> list[leniency.Hosted]:
    """The tools this server does not run (every type but ``function``), left out."""
    return leniency.split_tools(req.tools, ("function", None))[1]


def tools_for_engine(req: ResponsesRequest) -> tuple[ToolSpec, ...] | None:
    """Function tools as the engine offers them (a named choice offers only it).

    Hosted tools (``web_search``, ``file_search``, ``mcp``, ``custom``…) are left out
    (``left_out_tools``); forcing one of them is a 400. ``namespace`` tools are flattened
    into function tools before this (``flatten_namespaces``).
    """
    kept, left = leniency.split_tools(req.tools, ("function", None))
    tools: list[ToolSpec] = []
    for i, tool in kept:
        if not isinstance(tool, dict):
            raise InvalidRequest(f"tools[{i}] must be an object", param=f"tools.{i}")
        tools.append(
            function_tool(
                tool.get("name"), tool.get("description"), tool.get("parameters"), f"tools[{i}]"
            )
        )
    choice = req.tool_choice
    forced = choice == "required" or isinstance(choice, dict)
    if isinstance(choice, dict):
        kind = choice.get("type")
        name = choice.get("name") if kind in ("function", "custom") else kind
        if kind == "mcp":
            name = choice.get("server_label") or kind
        if not any(t.name == name for t in tools):
            leniency.refuse_forced(name if isinstance(name, str) else None, left)
    if not tools or choice == "none":
        if forced:
            leniency.refuse_nothing_to_force(left)
        return None
    if isinstance(choice, dict):
        if choice.get("type") != "function" or not isinstance(choice.get("name"), str):
            raise InvalidRequest(
                "tool_choice must be 'none', 'auto', 'required' or "
                "{'type': 'function', 'name': ...}",
                param="tool_choice",
            )
        return only_tool(tools, choice["name"], "tool_choice")
    return tuple(tools)


def is_forced(req: ResponsesRequest) -> bool:
    """Whether the answer must be a tool call (of a function tool: others are left out)."""
    functions = leniency.split_tools(req.tools, ("function", None))[0]
    return bool(functions) and (req.tool_choice == "required" or isinstance(req.tool_choice, dict))


def _schema(req: ResponsesRequest) -> str | None:
    fmt = req.text.format if req.text else None
    if fmt is None or fmt.type == "text":
        return None
    if fmt.type == "json_object":
        return json.dumps({"type": "object"})
    if fmt.schema_ is None:
        raise InvalidRequest("text.format json_schema needs a schema", param="text.format.schema")
    return json.dumps(fmt.schema_)


def generation_params(
    req: ResponsesRequest, limits: request_parts.Limits, tools: Sequence[ToolSpec] | None
) -> GenerationParams:
    """Sampling for a request (OpenAI's defaults; a forced call is grammar-constrained)."""
    schema = _schema(req)
    if is_forced(req) and tools:
        if schema is not None:
            raise InvalidRequest(
                "a forced tool_choice cannot be combined with a JSON text.format",
                param="tool_choice",
            )
        schema = request_parts.forced_call_schema(tools)
    return GenerationParams(
        max_tokens=leniency.capped_max_tokens(req.max_output_tokens, limits.max_tokens),
        temperature=1.0 if req.temperature is None else req.temperature,
        top_p=1.0 if req.top_p is None else req.top_p,
        json_schema=schema,
        timeout_s=limits.timeout_s,
    )


def chat_call(
    req: ResponsesRequest, messages: Sequence[Message], limits: request_parts.Limits
) -> ChatCall:
    """The engine's call for a response (``req`` flattened, ``messages`` its
    ``to_messages``): function tools, sampling, the thinking switch, the forced call."""
    tools = tools_for_engine(req)
    params = generation_params(req, limits, tools)
    return ChatCall.of(messages, params, tools, template_kwargs(req), forced=is_forced(req))


def template_kwargs(req: ResponsesRequest) -> dict[str, Any] | None:
    """``reasoning.effort`` as the thinking switch ('none'/'minimal' turn it off)."""
    if req.reasoning is None:
        return None
    return thinking_kwargs(req.reasoning.effort not in ("none", "minimal"))
