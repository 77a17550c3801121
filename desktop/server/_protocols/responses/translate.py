"""Pure translation of an OpenAI Responses API request (``requests``) into the engine's
plain values.

Promises the refusal of what we do not support (naming the field), and the same
``ChatCall`` the chat route makes (``chat_call``: messages, sampling, typed tool specs,
template switches, a forced call). The answer's side is ``output`` (output objects)
and ``events`` (the stream). No I/O: the route (``routes.py``) runs the engine and
the store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

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
from desktop.server import _image_parts as images
from desktop.server import _leniency as leniency
from desktop.server import _request_parts as request_parts
from desktop.server._protocols.responses import namespaces as tool_namespaces
from desktop.server._protocols.responses.namespaces import Namespaced
from desktop.server._protocols.responses.requests import (
    FunctionCallItem,
    FunctionCallOutputItem,
    ImagePart,
    InputItem,
    McpCallItem,
    McpListToolsItem,
    MessageItem,
    Part,
    ReasoningItem,
    RefusalPart,
    ResponsesRequest,
    TextPart,
    Tool,
    ToolChoiceObject,
    dumped,
)
from desktop.server._request_parts import (
    TemplateKwargs,
    function_tool,
    only_tool,
    thinking_kwargs,
)

ACCEPTED_INCLUDES = frozenset({"reasoning.encrypted_content"})  # ours is plain text anyway


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


def input_items(value: str | list[InputItem]) -> list[InputItem]:
    """``input`` as items (a string is one user message)."""
    if isinstance(value, str):
        return [
            MessageItem(
                type="message", role="user", content=[TextPart(type="input_text", text=value)]
            )
        ]
    return list(value)


def _param(where: str) -> str:
    """``input[0].content[1]`` as the dotted ``param`` errors carry."""
    return re.sub(r"\[(\d+)\]", r".\1", where)


def _text(content: str | list[Part], where: str) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for j, part in enumerate(content):
        if isinstance(part, TextPart):
            parts.append(part.text)
        elif isinstance(part, RefusalPart):
            parts.append(part.refusal)
        else:
            raise InvalidRequest(
                f"{where}.content[{j}]: part type '{part.type}' is not supported; send text "
                "parts only",
                param=_param(f"{where}.content.{j}"),
            )
    return "".join(parts)


def _arguments(arguments: object, where: str) -> str:
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"{where}.arguments must be a JSON object in a string",
            param=_param(f"{where}.arguments"),
        )
    return str(arguments)


_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def _message(
    item: MessageItem, where: str, i: int, reasoning: str | None, limits: ImageLimits
) -> Message:
    role = _ROLES.get(item.role)
    if role is None:
        raise InvalidRequest(
            f"{where}.role must be user, assistant, system or developer", param=f"input.{i}.role"
        )
    content = item.content
    if role == "user" and not isinstance(content, str) and _has_images(content):
        text, pictures = _pictured(content, where, limits)
        return Message("user", text, images=pictures)
    text = _text(content, where)
    if role == "assistant":
        return Message("assistant", text, reasoning=reasoning)
    return Message("user" if role == "user" else "system", text)


def _has_images(content: Sequence[Part]) -> bool:
    return any(isinstance(p, ImagePart) for p in content)


def _pictured(
    content: Sequence[Part], where: str, limits: ImageLimits
) -> tuple[str, tuple[Image, ...]]:
    """A user message's text and its ``input_image`` parts, each marked where it stood.

    ``image_url`` is a data URL (or bare base64, as some clients send it); a ``file_id``
    names an upload this server does not keep, and is refused.
    """
    pieces: list[str | Image] = []
    for j, part in enumerate(content):
        at = f"{where}.content[{j}]"
        if isinstance(part, TextPart) and part.type in ("input_text", "text"):
            pieces.append(part.text)
            continue
        if not isinstance(part, ImagePart):
            raise InvalidRequest(
                f"{at}: part type '{part.type}' is not supported in a user "
                "message; send input_text or input_image parts",
                param=_param(at),
            )
        url = part.image_url
        if url is None:
            what = "file_id (uploaded files are not kept here)" if part.file_id else "no image_url"
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


def _hosted_call(item: McpCallItem, where: str, reasoning: str | None) -> list[Message]:
    """A hosted MCP call EdgeDesk ran, with its answer."""
    call = ToolCall(item.id, item.name, _arguments(item.arguments, where))
    result = item.output
    if not isinstance(result, str):
        result = "error: " + json.dumps(item.error, ensure_ascii=False)
    return [
        Message("assistant", "", tool_calls=(call,), reasoning=reasoning),
        Message("tool", result, tool_call_id=call.id, name=call.name),
    ]


def _tool_output(
    item: FunctionCallOutputItem, where: str, names: dict[str, str], limits: ImageLimits
) -> Message:
    """A ``function_call_output`` as the tool message it answers; an output given as
    parts may hold pictures (Codex's ``view_image`` returns the picture it read)."""
    call_id, output = item.call_id, item.output
    pictures: tuple[Image, ...] = ()
    if not isinstance(output, str) and _has_images(output):
        text, pictures = _pictured(output, where + ".output", limits)
    else:
        text = _text(output, where + ".output")
    return Message("tool", text, tool_call_id=call_id, name=names.get(call_id), images=pictures)


def to_messages(
    instructions: str | None,
    items: Sequence[InputItem],
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
        if isinstance(item, MessageItem):
            out.append(_message(item, where, i, reasoning, limits))
            reasoning = None if out[-1].role == "assistant" else reasoning
        elif isinstance(item, FunctionCallItem):
            call = ToolCall(
                item.call_id,
                _call_name(item, spaces or Namespaced()),
                _arguments(item.arguments, where),
            )
            names[call.id] = call.name
            last = out[-1] if out else None
            if last is not None and last.role == "assistant" and reasoning is None:
                out[-1] = replace(last, tool_calls=(*last.tool_calls, call))
            else:
                out.append(Message("assistant", "", tool_calls=(call,), reasoning=reasoning))
                reasoning = None
        elif isinstance(item, FunctionCallOutputItem):
            out.append(_tool_output(item, where, names, limits))
        elif isinstance(item, McpCallItem):
            out += _hosted_call(item, where, reasoning)
            reasoning = None
        elif isinstance(item, McpListToolsItem):
            continue  # what the model was offered, not a turn of the conversation
        elif isinstance(item, ReasoningItem):
            parts = item.content or item.summary or []
            reasoning = _text(parts, where) or None
        else:
            raise InvalidRequest(
                f"{where}: item type '{item.type}' is not supported; send "
                "message, function_call, function_call_output, reasoning or "
                "mcp_call items",
                param=f"input.{i}.type",
            )
    if not any(m.role != "system" for m in out):
        raise InvalidRequest("input has no message to answer", param="input")
    return out


# ---------------------------------------------------------------- Codex namespaces


def _call_name(item: FunctionCallItem, spaces: Namespaced) -> str:
    namespace = item.namespace
    return spaces.join(namespace, item.name) if namespace else item.name


def flatten_namespaces(req: ResponsesRequest) -> tuple[ResponsesRequest, Namespaced]:
    """The request with its ``namespace`` tools flattened into function tools (and its
    ``tool_choice`` renamed to match), and the map back to (namespace, name).

    The request itself when it has no namespace. Codex expects a call of a namespaced
    tool as a ``function_call`` with the tool's own ``name`` and the ``namespace``
    (``output.call_item``); see ``namespaces``.
    """
    flat = tool_namespaces.flatten_namespaces(req.tools, req.tool_choice)
    if flat.tools is req.tools:  # nothing to flatten: the very same request
        return req, flat.spaces
    update = {"tools": flat.tools, "tool_choice": flat.tool_choice}
    return req.model_copy(update=update), flat.spaces


# ---------------------------------------------------------------- tools and sampling

_FUNCTION_TYPES = ("function", None)


def _split(req: ResponsesRequest) -> tuple[list[tuple[int, Tool]], list[leniency.Hosted]]:
    """The function tools (with their index) and the ones left out."""
    kept: list[tuple[int, Tool]] = []
    left: list[leniency.Hosted] = []
    for i, tool in enumerate(req.tools or ()):
        if tool.type in _FUNCTION_TYPES:
            kept.append((i, tool))
        else:
            left.append(leniency.hosted(dumped(tool)))
    return kept, left


def left_out_tools(req: ResponsesRequest) -> list[leniency.Hosted]:
    """The tools this server does not run (every type but ``function``), left out."""
    return _split(req)[1]


def _forced_name(choice: ToolChoiceObject) -> object:
    """The tool a ``tool_choice`` object forces, in the words ``refuse_forced`` matches."""
    if choice.type == "mcp":
        return choice.server_label or choice.type
    return choice.name if choice.type in ("function", "custom") else choice.type


def tools_for_engine(req: ResponsesRequest) -> tuple[ToolSpec, ...] | None:
    """Function tools as the engine offers them (a named choice offers only it).

    Hosted tools (``web_search``, ``file_search``, ``mcp``, ``custom``…) are left out
    (``left_out_tools``); forcing one of them is a 400. ``namespace`` tools are flattened
    into function tools before this (``flatten_namespaces``).
    """
    kept, left = _split(req)
    tools = [
        function_tool(tool.name, tool.description, tool.parameters, f"tools[{i}]")
        for i, tool in kept
    ]
    choice = req.tool_choice
    forced = choice == "required" or isinstance(choice, ToolChoiceObject)
    if isinstance(choice, ToolChoiceObject):
        name = _forced_name(choice)
        if not any(t.name == name for t in tools):
            leniency.refuse_forced(name if isinstance(name, str) else None, left)
    if not tools or choice == "none":
        if forced:
            leniency.refuse_nothing_to_force(left)
        return None
    if isinstance(choice, ToolChoiceObject):
        if choice.type != "function" or not isinstance(choice.name, str):
            raise InvalidRequest(
                "tool_choice must be 'none', 'auto', 'required' or "
                "{'type': 'function', 'name': ...}",
                param="tool_choice",
            )
        return only_tool(tools, choice.name, "tool_choice")
    return tuple(tools)


def is_forced(req: ResponsesRequest) -> bool:
    """Whether the answer must be a tool call (of a function tool: others are left out)."""
    return bool(_split(req)[0]) and (
        req.tool_choice == "required" or isinstance(req.tool_choice, ToolChoiceObject)
    )


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


def template_kwargs(req: ResponsesRequest) -> TemplateKwargs | None:
    """``reasoning.effort`` as the thinking switch ('none'/'minimal' turn it off)."""
    if req.reasoning is None:
        return None
    return thinking_kwargs(req.reasoning.effort not in ("none", "minimal"))
