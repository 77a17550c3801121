"""Pure translation of engine answers into Anthropic Messages API responses.

Answers become ``message`` objects and the ``message_start`` … ``message_stop`` event
stream with ``ping``; errors become Anthropic's error shape. Requests go the other way
in ``requests`` and ``translate``. No I/O. Bodies and blocks are TypedDicts: built to
be written as JSON, checked by mypy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, TypedDict

from desktop.engine import Delta, ToolCall, Usage
from desktop.server._answer import Ending, Piece
from desktop.server._leniency import ended_by_context
from desktop.server._mcp.hosted import McpToolResult, McpToolUse, TextContent
from desktop.server._request_parts import arguments_object

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
CONTEXT_STOP = "model_context_window_exceeded"
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    503: "overloaded_error",
}


class ThinkingBlock(TypedDict):
    """The answer's reasoning (its ``signature`` is empty: nothing here signs it)."""

    type: Literal["thinking"]
    thinking: str
    signature: str


class ToolUseBlock(TypedDict):
    """A call the model made (streamed: ``input`` empty, its JSON in deltas)."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, object]  # the call's arguments: any JSON object


Block = TextContent | ThinkingBlock | ToolUseBlock | McpToolUse | McpToolResult


class UsageOut(TypedDict):
    """Usage in Anthropic's shape."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int


class MessageObject(TypedDict):
    """The ``message`` body (and ``message_start``'s message)."""

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[Block]
    stop_reason: str | None
    stop_sequence: str | None
    usage: UsageOut


class TextDelta(TypedDict):
    """More words of a text block."""

    type: Literal["text_delta"]
    text: str


class ThinkingDelta(TypedDict):
    """More words of a thinking block."""

    type: Literal["thinking_delta"]
    thinking: str


class InputJsonDelta(TypedDict):
    """A streamed tool_use block's arguments (whole, in one delta)."""

    type: Literal["input_json_delta"]
    partial_json: str


# What a content_block_delta adds (not the engine's streamed delta).
BlockDelta = TextDelta | ThinkingDelta | InputJsonDelta


def tool_use_id(call: ToolCall) -> str:
    """Anthropic's id for a call (``toolu_…``)."""
    return "toolu_" + call.id.removeprefix("call_")


def usage_out(usage: Usage | None) -> UsageOut:
    """Usage in Anthropic's shape: prompt tokens served from the KV cache count as cache reads."""
    u = usage or Usage()
    return {
        "input_tokens": u.prompt_tokens - u.cached_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": u.cached_tokens,
        "output_tokens": u.completion_tokens,
    }


def content_blocks(thinking: str, text: str, calls: Sequence[ToolCall]) -> list[Block]:
    """A whole answer's content: thinking, text, then tool_use blocks."""
    blocks: list[Block] = []
    if thinking:
        blocks.append({"type": "thinking", "thinking": thinking, "signature": ""})
    if text:
        blocks.append({"type": "text", "text": text})
    blocks += [
        {
            "type": "tool_use",
            "id": tool_use_id(c),
            "name": c.name,
            "input": arguments_object(c.arguments),
        }
        for c in calls
    ]
    return blocks


def stop_fields(
    stop: str, final: Delta, requested: Sequence[str] | None, max_tokens: int | None = None
) -> tuple[str, str | None]:
    """``stop_reason`` and ``stop_sequence``: which of the client's stop_sequences ended it.

    The engine also stops on the template's turn markers; those end the turn as usual.
    With ``max_tokens`` (the limit used) known, an answer the context cut short says
    ``model_context_window_exceeded``, as Anthropic's API does, not ``max_tokens``.
    """
    if stop == "stop" and final.stop_sequence and final.stop_sequence in (requested or ()):
        return "stop_sequence", final.stop_sequence
    if stop == "length" and max_tokens is not None and ended_by_context(final, max_tokens):
        return CONTEXT_STOP, None
    return STOP_REASONS[stop], None


def message_object(
    *,
    message_id: str,
    model: str,
    content: list[Block],
    stop: str | None,
    usage: Usage | None,
    final: Delta | None = None,
    requested_stops: Sequence[str] | None = None,
    max_tokens: int | None = None,
) -> MessageObject:
    """The ``message`` body (``stop`` None: still streaming)."""
    reason, sequence = (
        stop_fields(stop, final, requested_stops, max_tokens)
        if stop and final
        else (STOP_REASONS.get(stop) if stop else None, None)
    )
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reason,
        "stop_sequence": sequence,
        "usage": usage_out(usage),
    }


def sse(type_: str, body: Mapping[str, object]) -> bytes:
    """One named server-sent event (``body``: its JSON object)."""
    return f"event: {type_}\ndata: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


class MessageEvents:
    """The event stream of one streamed message, content blocks numbered in order."""

    keepalive = sse("ping", {"type": "ping"})  # Anthropic's own, sent while the API works

    def __init__(
        self,
        message_id: str,
        model: str,
        stop_sequences: Sequence[str] | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self._id, self._model = message_id, model
        self._max_tokens = max_tokens  # the output limit used: tells it from the context
        self._stop_sequences = tuple(stop_sequences or ())
        self._index = 0
        self._open: Literal["thinking", "text"] | None = None

    def opening(self) -> bytes:
        """``message_start`` (usage not known yet) and a ``ping``."""
        message = message_object(
            message_id=self._id, model=self._model, content=[], stop=None, usage=None
        )
        return sse("message_start", {"type": "message_start", "message": message}) + self.keepalive

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        self._open = None
        self._index += 1
        return sse("content_block_stop", {"type": "content_block_stop", "index": self._index - 1})

    def _start(self, block: Block) -> bytes:
        return sse(
            "content_block_start",
            {"type": "content_block_start", "index": self._index, "content_block": block},
        )

    def _delta(self, delta: BlockDelta) -> bytes:
        return sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": self._index, "delta": delta},
        )

    def piece(self, piece: Piece) -> bytes:
        """The events of one chunk's words: thinking, then text (a new block when the kind
        changes)."""
        return self._words("thinking", piece.reasoning) + self._words("text", piece.text)

    def _words(self, kind: Literal["thinking", "text"], text: str) -> bytes:
        if not text:
            return b""
        out = b""
        if self._open != kind:
            out += self._close()
            self._open = kind
            out += self._start(
                {"type": "thinking", "thinking": "", "signature": ""}
                if kind == "thinking"
                else {"type": "text", "text": ""}
            )
        if kind == "thinking":
            return out + self._delta({"type": "thinking_delta", "thinking": text})
        return out + self._delta({"type": "text_delta", "text": text})

    def whole_block(self, block: Block) -> bytes:
        """A finished content block (an MCP tool use or result): start, then stop."""
        out = self._close() + self._start(block)
        out += sse("content_block_stop", {"type": "content_block_stop", "index": self._index})
        self._index += 1
        return out

    def ending(self, ending: Ending) -> bytes:
        """Close the open block, send each tool_use block, then message_delta and _stop."""
        out = self._close()
        for call in ending.calls:
            out += self._start(
                {"type": "tool_use", "id": tool_use_id(call), "name": call.name, "input": {}}
            )
            out += self._delta({"type": "input_json_delta", "partial_json": call.arguments})
            out += sse("content_block_stop", {"type": "content_block_stop", "index": self._index})
            self._index += 1
        reason, sequence = stop_fields(
            ending.stop, ending.final, self._stop_sequences, self._max_tokens
        )
        out += sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": sequence},
                "usage": usage_out(ending.final.usage),
            },
        )
        return out + sse("message_stop", {"type": "message_stop"})

    @staticmethod
    def failed(message: str, status: int = 500) -> bytes:
        """An ``error`` event for a failure after the stream began (typed by ``status``)."""
        return sse(
            "error",
            {
                "type": "error",
                "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
            },
        )
