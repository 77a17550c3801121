"""An answer as the blocks the Responses and Anthropic protocols stream: reasoning, text, calls.

Both protocols open an output item (or content block) per kind of output and close it
before the next; both need the tool calls split off the words exactly as the chat route
does (``toolcalls.StreamGate``). This turns the engine's chunks into that sequence once,
so each protocol module only renders it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from desktop.engine.types import Chunk, ToolCall
from desktop.errors import EdgeDeskError, InvalidRequest
from desktop.server import openai as oa
from desktop.server import openai_requests as oq
from desktop.server.services import RequestInfo
from desktop.server.streaming import close_stream
from desktop.server.toolcalls import StreamGate

log = logging.getLogger("edgedesk.server")
MAX_LOGGED_ERROR = 300  # characters of a mid-stream error kept in the access log


@dataclass(frozen=True)
class Piece:
    """Generated words of one kind; an empty text piece only marks the first chunk."""

    kind: Literal["reasoning", "text"]
    text: str


@dataclass(frozen=True)
class Ending:
    """The end of the answer: the tool calls found in it and the engine's final chunk."""

    calls: tuple[ToolCall, ...]
    final: Chunk

    @property
    def stop(self) -> Literal["stop", "length", "tool_calls"]:
        """Why the answer ended, in the engine-neutral words both protocols map from."""
        reason = oa.finish_reason(self.final, self.calls)
        return "tool_calls" if reason == "tool_calls" else \
            ("length" if reason == "length" else "stop")


def answer_pieces(chunks: Iterable[Chunk], tools: Sequence[dict[str, Any]] | None, *,
                  forced: bool) -> Iterator[Piece | Ending]:
    """Reasoning and text pieces as they come (possible calls held back), then the Ending."""
    gate = StreamGate(oq.tool_names(tools), hold_all=forced) if tools else None
    final = Chunk(finish_reason="stop")
    first = True
    for chunk in chunks:
        final = chunk
        if first:
            first = False
            yield Piece("text", "")
        if chunk.reasoning:
            yield Piece("reasoning", chunk.reasoning)
        words = gate.feed(chunk.text) if gate is not None else chunk.text
        if words:
            yield Piece("text", words)
    calls: tuple[ToolCall, ...] = ()
    if gate is not None:
        rest, calls = gate.finish()
        if rest:
            yield Piece("text", rest)
    yield Ending(calls, final)


class BlockEvents(Protocol):
    """A protocol's renderer of one streamed answer's blocks (Responses, Anthropic, Ollama)."""

    def opening(self) -> bytes:
        """What goes out with the first piece (may be empty)."""
        ...

    def piece(self, piece: Piece) -> bytes:
        """The events for some generated words."""
        ...

    def ending(self, ending: Ending) -> bytes:
        """The events that close the answer."""
        ...


def block_stream(chunks: Iterable[Chunk], tools: Sequence[dict[str, Any]] | None, *,
                 forced: bool, events: BlockEvents,
                 on_end: Callable[[Ending], None] | None = None) -> Iterator[bytes]:
    """A streamed answer's bytes: the opening with the first piece, pieces, the ending.

    ``on_end`` runs once the ending's events are made, before they go out (a stored
    response must exist when the client reads that it completed).
    """
    opening: bytes | None = None
    for item in answer_pieces(chunks, tools, forced=forced):
        out = b""
        if opening is None:  # held until the engine answers: earlier errors keep their status
            opening = out = events.opening()
        if isinstance(item, Ending):
            out += events.ending(item)
            if on_end is not None:
                on_end(item)
        else:
            out += events.piece(item)
        if out:
            yield out


def stream_failure(exc: Exception) -> EdgeDeskError:
    """The error a stream that broke mid-way reports (a bug is logged, not shown)."""
    if isinstance(exc, EdgeDeskError):
        return exc
    log.error("a stream failed mid-way", exc_info=exc)
    return EdgeDeskError(f"internal error ({type(exc).__name__}); see the server log")


def guarded(events: Iterator[bytes], failed: Callable[[EdgeDeskError], bytes], *,
            info: RequestInfo) -> Generator[bytes, None, None]:
    """``events``; an error after bytes went out ends the stream with ``failed(error)``.

    Once a stream has begun its HTTP status is sent, so an engine that fails mid-answer
    (a remote that drops the connection, times out or reports an error; a local engine
    fault) can only be told in the stream, in the protocol's own error event, after the
    tokens already sent. Before the first bytes the error is raised, so the route still
    answers with the error's own status. A failure after the first bytes is recorded in
    ``info.error``, so the access log tells it apart from an answer that completed.
    Closing this closes ``events`` (and so frees the scheduler's gate) at once.
    """
    started = False
    try:
        for out in events:
            started = True
            yield out
    except Exception as exc:
        if not started:
            raise
        error = stream_failure(exc)
        info.error = error.message[:MAX_LOGGED_ERROR]
        info.error_code, info.error_type = error.code, error.error_type
        yield failed(error)
    finally:
        close_stream(events)


def whole_answer(text: str, tools: Sequence[dict[str, Any]] | None
                 ) -> tuple[str, tuple[ToolCall, ...]]:
    """A drained answer's words and tool calls."""
    parsed = oa.split_answer(text, tools)
    return parsed.content, parsed.tool_calls


def function_tool(name: object, description: object, parameters: object,
                  where: str) -> dict[str, Any]:
    """One tool in the OpenAI shape the engine renders, checked field by field."""
    if not isinstance(name, str) or not name or len(name) > 128:
        raise InvalidRequest(f"{where}.name must be a non-empty string of at most 128 "
                             "characters", param=f"{where}.name")
    if description is not None and not isinstance(description, str):
        raise InvalidRequest(f"{where}.description must be a string",
                             param=f"{where}.description")
    if parameters is not None and not isinstance(parameters, dict):
        raise InvalidRequest(f"{where}: the parameters schema must be a JSON object",
                             param=where)
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = parameters if parameters else {"type": "object",
                                                            "properties": {}}
    return {"type": "function", "function": function}


def only_tool(tools: list[dict[str, Any]], name: str, param: str) -> list[dict[str, Any]]:
    """The one tool a named choice forces (400 naming ``param`` when it is not offered)."""
    chosen = [t for t in tools if t["function"]["name"] == name]
    if not chosen:
        raise InvalidRequest(f"tool_choice names '{name}', which is not among the tools",
                             param=param)
    return chosen


def arguments_object(arguments: str) -> dict[str, Any]:
    """A call's JSON arguments text as an object (``{}`` when it is not one)."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def thinking_kwargs(enabled: bool | None) -> dict[str, Any] | None:
    """The chat template's thinking switch (None: leave the model's default)."""
    return None if enabled is None else {"enable_thinking": enabled}
