"""An answer as the blocks the Responses and Anthropic protocols stream: reasoning, text, calls.

Both protocols open an output item (or content block) per kind of output and close it
before the next; both need the tool calls split off the words exactly as the chat route
does (``toolcalls.StreamGate``). This turns the engine's chunks into that sequence once,
so each protocol module only renders it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from desktop.engine.types import Chunk, ToolCall
from desktop.errors import InvalidRequest
from desktop.server import openai as oa
from desktop.server.toolcalls import StreamGate


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
    gate = StreamGate(oa.tool_names(tools), hold_all=forced) if tools else None
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


def capped_max_tokens(requested: int | None, limit: int, param: str) -> int:
    """Tokens to generate: ``requested`` (400 naming ``param`` above ``limit``), else ``limit``."""
    if requested is None:
        return limit
    if requested > limit:
        raise InvalidRequest(f"{param} is {requested} but this server allows at most {limit}; "
                             "ask for fewer tokens", param=param)
    return requested


def thinking_kwargs(enabled: bool | None) -> dict[str, Any] | None:
    """The chat template's thinking switch (None: leave the model's default)."""
    return None if enabled is None else {"enable_thinking": enabled}
