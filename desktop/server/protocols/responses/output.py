"""The Responses API's output objects, built from an answer's plain values.

Promises the ids of a response and its items, the output items (reasoning, message,
function calls, namespaced calls carrying their ``namespace``), usage in the Responses
shape, and the ``response`` object that echoes the request's settings as OpenAI does.
Pure: no I/O. The request side (schema, input items, tools) is ``wire``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.engine import ToolCall, Usage
from desktop.server import leniency
from desktop.server.protocols.responses.namespaces import Namespaced
from desktop.server.protocols.responses.wire import ResponsesRequest, TextFormat


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


def reasoning_item(ids: Ids, text: str, status: str = "completed") -> dict[str, Any]:
    """A reasoning output item carrying the model's thinking as reasoning text."""
    content = [{"type": "reasoning_text", "text": text}] if text else []
    return {
        "type": "reasoning",
        "id": ids.reasoning,
        "summary": [],
        "content": content,
        "status": status,
    }


def text_part(text: str) -> dict[str, Any]:
    """An ``output_text`` content part."""
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(ids: Ids, text: str | None, status: str = "completed") -> dict[str, Any]:
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
) -> dict[str, Any]:
    """A function call output item; a call of a flattened namespaced tool carries the
    tool's own ``name`` and its ``namespace``, as Codex routes it."""
    namespace, name = (spaces or Namespaced()).split(call.name)
    item = {
        "type": "function_call",
        "id": ids.call(n),
        "call_id": call.id,
        "name": name,
        "arguments": call.arguments if arguments is None else arguments,
        "status": status,
    }
    return item if namespace is None else {**item, "namespace": namespace}


def output_items(
    ids: Ids, reasoning: str, text: str, calls: Sequence[ToolCall], spaces: Namespaced | None = None
) -> list[dict[str, Any]]:
    """A whole answer's output items: reasoning, message, then function calls."""
    items: list[dict[str, Any]] = []
    if reasoning:
        items.append(reasoning_item(ids, reasoning))
    if text or not calls:
        items.append(message_item(ids, text))
    items += [call_item(ids, n, c, spaces=spaces) for n, c in enumerate(calls)]
    return items


def usage_out(usage: Usage | None) -> dict[str, Any]:
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
    output: list[dict[str, Any]],
    usage: Usage | None = None,
    stop: str | None = None,
    error: dict[str, Any] | None = None,
    stored: bool = False,
    by_context: bool = False,
) -> dict[str, Any]:
    """The ``response`` object, echoing the request's settings as OpenAI does.

    ``by_context``: the model's context, not ``max_output_tokens``, cut the answer; the
    reason then says so rather than name a limit the client may never have set.
    """
    fmt = req.text.format if req.text and req.text.format else TextFormat()
    if stop == "length" and status == "completed":
        status = "incomplete"
    reason = leniency.CONTEXT_REASON if by_context else "max_output_tokens"
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
        "tool_choice": req.tool_choice if req.tool_choice is not None else "auto",
        "tools": req.tools or [],
        "top_p": 1.0 if req.top_p is None else req.top_p,
        "truncation": "disabled",
        "usage": usage_out(usage) if usage is not None else None,
        "user": req.user,
        "metadata": req.metadata or {},
    }
