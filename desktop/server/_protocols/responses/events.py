"""The ``response.*`` server-sent events of one streamed Responses API answer.

Built from the items ``answer.answer_pieces`` yields; each event carries its
``sequence_number``, and every output item is opened (``output_item.added``), filled
(deltas) and closed (``.done`` events) in the documented order. Pure: no I/O.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from desktop.server._answer import Ending, Piece
from desktop.server._leniency import ended_by_context
from desktop.server._mcp.hosted import McpCall, McpListTools
from desktop.server._protocols.responses.namespaces import Namespaced
from desktop.server._protocols.responses.output import (
    Ids,
    OutputItem,
    ResponseObject,
    call_item,
    message_item,
    reasoning_item,
    response_object,
    text_part,
)
from desktop.server._protocols.responses.requests import ResponsesRequest


class ResponseEvents:
    """The ``response.*`` server-sent events of one streamed response, numbered in order."""

    def __init__(
        self,
        req: ResponsesRequest,
        ids: Ids,
        created_at: int,
        stored: bool,
        max_tokens: int | None = None,
        *,
        spaces: Namespaced | None = None,
    ) -> None:
        self._req, self._ids, self._created_at, self._stored = req, ids, created_at, stored
        self._spaces = spaces  # flattened namespaced tools: calls go out with namespace
        self._max_tokens = max_tokens  # the output limit used: tells it from the context
        self._seq = 0
        # The stream's thread makes the events; the event loop may make a keepalive
        # meanwhile (``keepalive``): one lock keeps the numbers in order.
        self._lock = threading.Lock()
        self._quiet_from: int | None = None  # the number after the opening's or a keepalive
        self.output: list[OutputItem] = []  # finished items, in order
        self._open: Literal["reasoning", "message"] | None = None
        self._reasoning: list[str] = []
        self._text: list[str] = []
        self.response: ResponseObject | None = None  # the final object, once ended

    def _event(self, type_: str, **fields: Any) -> bytes:
        with self._lock:
            seq = self._seq
            self._seq += 1
        return _sse(type_, seq, fields)

    def keepalive(self) -> bytes:
        """Another ``response.in_progress`` while the prompt is still being read (b"" once
        any other event was made): Codex drops a stream after 5 minutes without an event,
        and SSE comments do not count for it. Event loop only.

        Made only while nothing but the opening (and earlier keepalives) exists, under
        the numbering lock: an event the stream's thread makes later is numbered after
        it and queued after it was sent, so the numbers on the wire stay in order.
        """
        with self._lock:
            if self._quiet_from is None or self._seq != self._quiet_from:
                return b""
            seq = self._seq
            self._seq = self._quiet_from = seq + 1
        snapshot = self._object("in_progress", output=[])
        return _sse("response.in_progress", seq, {"response": snapshot})

    def _object(self, status: str, **extra: Any) -> ResponseObject:
        return response_object(
            self._req,
            ids=self._ids,
            created_at=self._created_at,
            status=status,
            stored=self._stored,
            **extra,
        )

    def opening(self) -> bytes:
        """``response.created`` then ``response.in_progress``."""
        snapshot = self._object("in_progress", output=[])
        out = self._event("response.created", response=snapshot) + self._event(
            "response.in_progress", response=snapshot
        )
        with self._lock:
            self._quiet_from = self._seq
        return out

    def _close(self) -> bytes:
        index = len(self.output)
        item: OutputItem
        if self._open == "reasoning":
            text = "".join(self._reasoning)
            item = reasoning_item(self._ids, text)
            out = self._event(
                "response.reasoning_text.done",
                item_id=self._ids.reasoning,
                output_index=index,
                content_index=0,
                text=text,
            )
        elif self._open == "message":
            text = "".join(self._text)
            item = message_item(self._ids, text)
            out = self._event(
                "response.output_text.done",
                item_id=self._ids.message,
                output_index=index,
                content_index=0,
                text=text,
                logprobs=[],
            ) + self._event(
                "response.content_part.done",
                item_id=self._ids.message,
                output_index=index,
                content_index=0,
                part=text_part(text),
            )
        else:
            return b""
        self._open = None
        self.output.append(item)
        return out + self._event("response.output_item.done", output_index=index, item=item)

    def _open_message(self, index: int) -> bytes:
        self._open = "message"
        return self._event(
            "response.output_item.added",
            output_index=index,
            item=message_item(self._ids, None, "in_progress"),
        ) + self._event(
            "response.content_part.added",
            item_id=self._ids.message,
            output_index=index,
            content_index=0,
            part=text_part(""),
        )

    def piece(self, piece: Piece) -> bytes:
        """The events of one chunk's words: reasoning, then text (opening an item when the
        kind changes)."""
        return self._words("reasoning", piece.reasoning) + self._words("text", piece.text)

    def _words(self, kind: Literal["reasoning", "text"], text: str) -> bytes:
        if not text:
            return b""
        index = len(self.output)
        out = b""
        if kind == "reasoning":
            if self._open != "reasoning":
                out += self._close()
                index = len(self.output)
                self._open = "reasoning"
                out += self._event(
                    "response.output_item.added",
                    output_index=index,
                    item=reasoning_item(self._ids, "", "in_progress"),
                )
            self._reasoning.append(text)
            return out + self._event(
                "response.reasoning_text.delta",
                item_id=self._ids.reasoning,
                output_index=index,
                content_index=0,
                delta=text,
            )
        if self._open != "message":
            out += self._close()
            index = len(self.output)
            out += self._open_message(index)
        self._text.append(text)
        return out + self._event(
            "response.output_text.delta",
            item_id=self._ids.message,
            output_index=index,
            content_index=0,
            delta=text,
            logprobs=[],
        )

    def whole_item(self, item: McpListTools | McpCall, progress: Sequence[str] = ()) -> bytes:
        """A finished output item (an MCP listing or call): added, its ``progress``
        events, done."""
        out = self._close()
        index = len(self.output)
        added: McpListTools | McpCall = item
        if item["type"] == "mcp_call":
            added = item.copy()
            added["status"] = "in_progress"
        out += self._event("response.output_item.added", output_index=index, item=added)
        for kind in progress:
            out += self._event(kind, item_id=item["id"], output_index=index)
        self.output.append(item)
        return out + self._event("response.output_item.done", output_index=index, item=item)

    def ending(self, ending: Ending) -> bytes:
        """Close the open item, send each function call, then the completed response."""
        out = self._close()
        if not self.output and not ending.calls:
            # An empty answer still gets its (empty) message item, as the whole body has.
            out += self._open_message(0) + self._close()
        for n, call in enumerate(ending.calls):
            index = len(self.output)
            item_id = self._ids.call(n)
            item = call_item(self._ids, n, call, spaces=self._spaces)
            out += (
                self._event(
                    "response.output_item.added",
                    output_index=index,
                    item=call_item(self._ids, n, call, "in_progress", "", spaces=self._spaces),
                )
                + self._event(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=index,
                    delta=call.arguments,
                )
                + self._event(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=index,
                    name=item["name"],
                    arguments=call.arguments,
                )
            )
            self.output.append(item)
            out += self._event("response.output_item.done", output_index=index, item=item)
        self.response = self._object(
            "completed",
            output=self.output,
            usage=ending.final.usage,
            stop=ending.stop,
            by_context=ended_by_context(ending.final, self._max_tokens),
        )
        kind = (
            "response.incomplete"
            if self.response["status"] == "incomplete"
            else "response.completed"
        )
        return out + self._event(kind, response=self.response)

    def failed(self, code: str, message: str) -> bytes:
        """``response.failed`` for an error after the stream began."""
        return self._event(
            "response.failed",
            response=self._object(
                "failed", output=self.output, error={"code": code, "message": message}
            ),
        )


def _sse(type_: str, seq: int, fields: Mapping[str, object]) -> bytes:
    """One ``response.*`` server-sent event numbered ``seq``."""
    data = json.dumps({"type": type_, "sequence_number": seq, **fields}, ensure_ascii=False)
    return f"event: {type_}\ndata: {data}\n\n".encode()
