"""Pure translation of Anthropic Messages API requests (``requests``) into the engine's
plain values.

Requests become the chat route's engine call (``chat_call``: messages, sampling, typed
tool specs, the thinking switch, a forced call), each bad field refused with its path
named.
Answers go the other way in ``events``. No I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

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
from desktop.server._protocols.anthropic.requests import (
    Block,
    CountTokensRequest,
    ImageBlock,
    InputMessage,
    MessagesRequest,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    Tool,
    ToolResultBlock,
    ToolUseBlock,
)
from desktop.server._request_parts import function_tool, only_tool, thinking_kwargs

_REFUSED_BLOCKS = ("image", "document", "search_result", "container_upload")


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


def _refuse_block(block: Block, where: str) -> InvalidRequest:
    kind = block.type
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


def _texts(blocks: Sequence[Block], where: str) -> list[str]:
    """The texts of blocks that may only be text (a system prompt's)."""
    out = []
    for j, block in enumerate(blocks):
        if not isinstance(block, TextBlock):
            raise _refuse_block(block, f"{where}[{j}]")
        out.append(block.text)
    return out


def system_text(system: Sequence[Block] | None) -> str:
    """``system`` as one text (its text blocks joined)."""
    return "\n".join(_texts(system or (), "system"))


def _tool_result(block: ToolResultBlock, where: str) -> str:
    return _tool_result_pictured(block, where, pictures=False)[0]


def _tool_result_pictured(
    block: ToolResultBlock,
    where: str,
    *,
    pictures: bool = True,
    limits: ImageLimits = DEFAULT_LIMITS,
) -> tuple[str, tuple[Image, ...]]:
    """A tool result's text, and its pictures where they may be (a screenshot a tool
    returned, as Claude Code sends an image file it read)."""
    texts: list[str | Image] = []
    for j, part in enumerate(block.content):
        at = f"{where}.content[{j}]"
        if pictures and isinstance(part, ImageBlock):
            texts.append(image_block(part, at, limits))
        elif isinstance(part, TextBlock):
            texts.append(part.text)
        else:
            raise _refuse_block(part, at)
    return images.joined(texts, "\n")


def image_block(block: ImageBlock, where: str, limits: ImageLimits = DEFAULT_LIMITS) -> Image:
    """An ``image`` block's picture: a ``base64`` source (a ``url`` one is not fetched)."""
    source, param = block.source, _param(f"{where}.source")
    if source.type == "base64":
        return images.image_from_base64(
            source.data, where=where, param=param + ".data", limits=limits
        )
    if source.type == "url":
        return images.image_from_url(source.url, where=where, param=param + ".url", limits=limits)
    raise InvalidRequest(
        f"{where}.source must be {{'type': 'base64', 'media_type': …, "
        f"'data': …}} (source type '{source.type}' is not supported here)",
        param=param,
    )


def _user_turn(
    blocks: list[Block], where: str, names: dict[str, str], limits: ImageLimits
) -> list[Message]:
    out: list[Message] = []
    texts: list[str | Image] = []
    for j, block in enumerate(blocks):
        at = f"{where}.content[{j}]"
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ImageBlock):
            texts.append(image_block(block, at, limits))
        elif isinstance(block, ToolResultBlock) and block.type == "tool_result":
            call_id = block.tool_use_id
            result, pictures = _tool_result_pictured(block, at, limits=limits)
            out.append(
                Message(
                    "tool", result, tool_call_id=call_id, name=names.get(call_id), images=pictures
                )
            )
        else:
            raise _refuse_block(block, at)
    if texts:
        text, pictures = images.joined(texts, "\n")
        out.append(Message("user", text, images=pictures))
    return out


def _assistant_turn(blocks: list[Block], where: str, names: dict[str, str]) -> list[Message]:
    """The turn's messages: one, or (hosted MCP rounds) each round's calls and results,
    then the words that followed."""
    out: list[Message] = []
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(blocks):
        at = f"{where}.content[{j}]"
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thoughts.append(block.thinking)
        elif isinstance(block, RedactedThinkingBlock):
            continue  # encrypted by Anthropic: nothing a local model can read
        elif isinstance(block, ToolResultBlock) and block.type == "mcp_tool_result":
            # EdgeDesk ran the call: the round ends here.
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
            call_id = block.tool_use_id
            out.append(
                Message(
                    "tool", _tool_result(block, at), tool_call_id=call_id, name=names.get(call_id)
                )
            )
        elif isinstance(block, ToolUseBlock):
            call = ToolCall(block.id, block.name, json.dumps(block.input, ensure_ascii=False))
            names[call.id] = call.name
            calls.append(call)
        else:
            raise _refuse_block(block, at)
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


def to_messages(
    system: Sequence[Block] | None,
    messages: Sequence[InputMessage],
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
        where, role = f"messages[{i}]", message.role
        blocks = message.content
        if role == "user":
            out += _user_turn(blocks, where, names, limits)
        elif role == "assistant":
            out += _assistant_turn(blocks, where, names)
        elif role == "system":  # Claude Code's reminders: their text
            out.append(Message("system", "\n".join(_texts(blocks, f"{where}.content"))))
        else:
            raise InvalidRequest(
                f"{where}.role must be 'user', 'assistant' or 'system'", param=f"messages.{i}.role"
            )
    if messages and messages[-1].role == "assistant":
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


def _split(req: CountTokensRequest) -> tuple[list[tuple[int, Tool]], list[leniency.Hosted]]:
    """The client tools (with their index) and the ones left out."""
    kept: list[tuple[int, Tool]] = []
    left: list[leniency.Hosted] = []
    for i, tool in enumerate(req.tools or ()):
        if tool.type in _CLIENT_TOOL_TYPES:
            kept.append((i, tool))
        else:
            left.append(leniency.hosted(tool.model_dump()))
    return kept, left


def left_out_tools(req: CountTokensRequest) -> list[leniency.Hosted]:
    """The tools (and MCP servers) this server does not run, left out of the prompt."""
    servers = [
        leniency.Hosted("mcp_servers", s.name if isinstance(s.name, str) else None)
        for s in req.mcp_servers or ()
    ]
    return _split(req)[1] + servers


def tools_for_engine(req: CountTokensRequest) -> tuple[ToolSpec, ...] | None:
    """Client tools as the engine offers them (a named choice offers only it)."""
    kept, left = _split(req)
    tools = [
        function_tool(tool.name, tool.description, tool.input_schema, f"tools[{i}]")
        for i, tool in kept
    ]
    kind = _choice(req)
    name = req.tool_choice.name if req.tool_choice is not None and kind == "tool" else None
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
    kind = req.tool_choice.type
    if kind not in ("auto", "any", "tool", "none"):
        raise InvalidRequest(
            "tool_choice.type must be auto, any, tool or none", param="tool_choice.type"
        )
    return str(kind)


def is_forced(req: CountTokensRequest) -> bool:
    """Whether the answer must be a tool call (``any`` or a named ``tool``)."""
    return (
        bool(_split(req)[0])
        and req.tool_choice is not None
        and req.tool_choice.type in ("any", "tool")
    )


def template_kwargs(req: CountTokensRequest) -> request_parts.TemplateKwargs | None:
    """``thinking`` as the thinking switch (``budget_tokens`` is not enforced)."""
    if req.thinking is None:
        return None
    kind = req.thinking.type
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
    fmt = req.output_config.format if req.output_config is not None else None
    if fmt is None:
        return None
    if fmt.type != "json_schema" or not isinstance(fmt.schema_, dict):
        raise InvalidRequest(
            "output_config.format must be {'type': 'json_schema', 'schema': {...}}",
            param="output_config.format",
        )
    return json.dumps(fmt.schema_)
