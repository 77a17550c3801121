"""The Responses API's output objects, built from an answer's plain values.

Promises the ids of a response and its items, the output items (reasoning, message,
function calls, namespaced calls carrying their ``namespace``), usage in the Responses
shape, and the ``response`` object that echoes the request's settings as OpenAI does.
Pure: no I/O. The request side (schema, input items, tools) is ``requests`` and ``translate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from desktop.engine import ToolCall, Usage
from desktop.server import _leniency as leniency
from desktop.server._mcp.hosted import McpCall, McpListTools
from desktop.server._protocols.responses.namespaces import Namespaced
from desktop.server._protocols.responses.requests import (
    ResponsesRequest,
    TextFormat,
    ToolChoiceObject,
    dumped,
)


class ReasoningText(TypedDict):
    """The model's thinking, as a reasoning item's content part."""

    type: Literal["reasoning_text"]
    text: str


class ReasoningOut(TypedDict):
    """A ``reasoning`` output item (no summaries are made: ``summary`` stays empty)."""

    type: Literal["reasoning"]
    id: str
    summary: list[ReasoningText]
    content: list[ReasoningText]
    status: str


class OutputText(TypedDict):
    """An ``output_text`` content part (no annotations or logprobs here)."""

    type: Literal["output_text"]
    text: str
    annotations: list[object]
    logprobs: list[object]


class MessageOut(TypedDict):
    """The assistant's ``message`` output item."""

    type: Literal["message"]
    id: str
    status: str
    role: Literal["assistant"]
    content: list[OutputText]


class FunctionCallOut(TypedDict):
    """A ``function_call`` output item (``namespace``: a call of a namespaced tool)."""

    type: Literal["function_call"]
    id: str
    call_id: str
    name: str
    arguments: str
    status: str
    namespace: NotRequired[str]


OutputItem = ReasoningOut | MessageOut | FunctionCallOut | McpListTools | McpCall


class CachedTokens(TypedDict):
    """``input_tokens_details``."""

    cached_tokens: int


class ReasoningTokens(TypedDict):
    """``output_tokens_details`` (reasoning is not counted apart)."""

    reasoning_tokens: int


class UsageOut(TypedDict):
    """Usage in the Responses shape."""

    input_tokens: int
    input_tokens_details: CachedTokens
    output_tokens: int
    output_tokens_details: ReasoningTokens
    total_tokens: int


class ResponseError(TypedDict):
    """A failed response's ``error``."""

    code: str
    message: str


class IncompleteDetails(TypedDict):
    """Why a response is incomplete."""

    reason: str


class ReasoningEcho(TypedDict):
    """The request's ``reasoning`` as the response echoes it."""

    effort: str | None
    summary: None


class TextEcho(TypedDict):
    """The request's ``text`` as the response echoes it."""

    format: dict[str, object]


class ResponseObject(TypedDict):
    """The ``response`` object."""

    id: str
    object: Literal["response"]
    created_at: int
    status: str
    error: ResponseError | None
    incomplete_details: IncompleteDetails | None
    instructions: str | None
    max_output_tokens: int | None
    model: str
    output: list[OutputItem]
    parallel_tool_calls: bool
    previous_response_id: str | None
    reasoning: ReasoningEcho
    store: bool
    temperature: float
    text: TextEcho
    # The request's tool choice and tools, echoed as the client sent them (``dumped``).
    tool_choice: str | dict[str, object]
    tools: list[dict[str, object]]
    top_p: float
    truncation: Literal["disabled"]
    usage: UsageOut | None
    user: str | None
    metadata: dict[str, str]


@dataclass(frozen=True)
class Ids:
    """The ids of one response and its output items (derived from the request id)."""

    response: str

    @property
    def message(self) -> str:
        """The message item's id."""
        return "msg_" + self.response.removeprefix("resp_")

    @property
    def reasoning(self) -> str:
        """The reasoning item's id."""
        return "rs_" + self.response.removeprefix("resp_")

    def call(self, n: int) -> str:
        """The ``n``-th function call item's id."""
        return f"fc_{self.response.removeprefix('resp_')}_{n}"


def reasoning_item(ids: Ids, text: str, status: str = "completed") -> ReasoningOut:
    """A reasoning output item carrying the model's thinking as reasoning text."""
    content: list[ReasoningText] = [{"type": "reasoning_text", "text": text}] if text else []
    return {
        "type": "reasoning",
        "id": ids.reasoning,
        "summary": [],
        "content": content,
        "status": status,
    }


def text_part(text: str) -> OutputText:
    """An ``output_text`` content part."""
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(ids: Ids, text: str | None, status: str = "completed") -> MessageOut:
    """The assistant's message item (``None``: no content parts yet)."""
    return {
        "type": "message",
        "id": ids.message,
        "status": status,
        "role": "assistant",
        "content": [] if text is None else [text_part(text)],
    }


def call_item(
    ids: Ids,
    n: int,
    call: ToolCall,
    status: str = "completed",
    arguments: str | None = None,
    *,
    spaces: Namespaced | None = None,
) -> FunctionCallOut:
    """A function call output item; a call of a flattened namespaced tool carries the
    tool's own ``name`` and its ``namespace``, as Codex routes it."""
    namespace, name = (spaces or Namespaced()).split(call.name)
    item: FunctionCallOut = {
        "type": "function_call",
        "id": ids.call(n),
        "call_id": call.id,
        "name": name,
        "arguments": call.arguments if arguments is None else arguments,
        "status": status,
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def output_items(
    ids: Ids, reasoning: str, text: str, calls: Sequence[ToolCall], spaces: Namespaced | None = None
) -> list[OutputItem]:
    """A whole answer's output items: reasoning, message, then function calls."""
    items: list[OutputItem] = []
    if reasoning:
        items.append(reasoning_item(ids, reasoning))
    if text or not calls:
        items.append(message_item(ids, text))
    items += [call_item(ids, n, c, spaces=spaces) for n, c in enumerate(calls)]
    return items


def usage_out(usage: Usage | None) -> UsageOut:
    """Usage in the Responses shape."""
    u = usage or Usage()
    return {
        "input_tokens": u.prompt_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_tokens},
        "output_tokens": u.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.total_tokens,
    }


def response_object(
    req: ResponsesRequest,
    *,
    ids: Ids,
    created_at: int,
    status: str,
    output: list[OutputItem],
    usage: Usage | None = None,
    stop: str | None = None,
    error: ResponseError | None = None,
    stored: bool = False,
    by_context: bool = False,
) -> ResponseObject:
    """The ``response`` object, echoing the request's settings as OpenAI does.

    ``by_context``: the model's context, not ``max_output_tokens``, cut the answer; the
    reason then says so rather than name a limit the client may never have set.
    """
    fmt = req.text.format if req.text and req.text.format else TextFormat()
    if stop == "length" and status == "completed":
        status = "incomplete"
    reason = leniency.CONTEXT_REASON if by_context else "max_output_tokens"
    choice = req.tool_choice if req.tool_choice is not None else "auto"
    return {
        "id": ids.response,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "error": error,
        "incomplete_details": {"reason": reason} if status == "incomplete" else None,
        "instructions": req.instructions,
        "max_output_tokens": req.max_output_tokens,
        "model": req.model,
        "output": output,
        "parallel_tool_calls": True if req.parallel_tool_calls is None else req.parallel_tool_calls,
        "previous_response_id": req.previous_response_id,
        "reasoning": {"effort": req.reasoning.effort if req.reasoning else None, "summary": None},
        "store": stored,
        "temperature": 1.0 if req.temperature is None else req.temperature,
        "text": {"format": fmt.model_dump(by_alias=True, exclude_none=True)},
        "tool_choice": dumped(choice) if isinstance(choice, ToolChoiceObject) else choice,
        "tools": [dumped(tool) for tool in req.tools or ()],
        "top_p": 1.0 if req.top_p is None else req.top_p,
        "truncation": "disabled",
        "usage": usage_out(usage) if usage is not None else None,
        "user": req.user,
        "metadata": req.metadata or {},
    }
