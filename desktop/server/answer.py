"""An answer as every protocol renders it: pieces as they come, then how it ended.

All four protocols (OpenAI chat and completions, Responses, Anthropic, Ollama) turn the
engine's chunks into their own events from the same items: one ``Piece`` per chunk
(its reasoning, its words with possible tool-call markup held back exactly as
``toolcalls.StreamGate`` decides, its logprobs), then one ``Ending`` with the calls
found. A whole (not streamed) answer is a ``WholeAnswer``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from desktop.engine.toolcalls import StreamGate
from desktop.engine.types import Chunk, TokenLogprob, ToolCall
from desktop.server.openai import finish_reason, split_answer
from desktop.server.openai_requests import tool_names


class Piece(NamedTuple):
    """What one engine chunk adds to the answer; may be empty (the first one marks the start).

    A tuple, not a dataclass: one is made per token, and that costs a third as much.
    """

    text: str = ""
    reasoning: str = ""
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True)
class Ending:
    """The end of the answer: the tool calls found in it and the engine's final chunk."""

    calls: tuple[ToolCall, ...]
    final: Chunk

    @property
    def stop(self) -> Literal["stop", "length", "tool_calls"]:
        """Why the answer ended, in the engine-neutral words the protocols map from."""
        reason = finish_reason(self.final, self.calls)
        return (
            "tool_calls" if reason == "tool_calls" else ("length" if reason == "length" else "stop")
        )


def answer_pieces(
    chunks: Iterable[Chunk], tools: Sequence[dict[str, Any]] | None, *, forced: bool
) -> Iterator[Piece | Ending]:
    """A Piece per chunk as it comes (possible calls held back), the held words, the Ending.

    ``ADMITTED`` becomes an empty Piece: the answer starts there, before any words."""
    gate = StreamGate(tool_names(tools), hold_all=forced) if tools else None
    final = Chunk(finish_reason="stop")
    for chunk in chunks:
        if chunk.admitted:
            yield Piece()
            continue
        final = chunk
        words = gate.feed(chunk.text) if gate is not None else chunk.text
        yield Piece(words, chunk.reasoning, chunk.logprobs)
    calls: tuple[ToolCall, ...] = ()
    if gate is not None:
        rest, calls = gate.finish()
        if rest:
            yield Piece(rest)
    yield Ending(calls, final)


@dataclass(frozen=True)
class WholeAnswer:
    """A drained answer: its text, reasoning, final chunk and logprobs."""

    text: str
    reasoning: str
    final: Chunk
    logprobs: list[TokenLogprob] = field(default_factory=list)

    def split(self, tools: Sequence[dict[str, Any]] | None) -> tuple[str, tuple[ToolCall, ...]]:
        """The words and the tool calls (parsed only when tools were offered)."""
        parsed = split_answer(self.text, tools)
        return parsed.content, parsed.tool_calls


def drain(chunks: Iterable[Chunk]) -> WholeAnswer:
    """Read an answer to its end (blocks): the last chunk is the final one."""
    text: list[str] = []
    reasoning: list[str] = []
    logprobs: list[TokenLogprob] = []
    final = Chunk(finish_reason="stop")  # the engine always sends one; be safe
    for chunk in chunks:
        if chunk.admitted:
            continue
        text.append(chunk.text)
        reasoning.append(chunk.reasoning)
        logprobs.extend(chunk.logprobs)
        final = chunk
    return WholeAnswer("".join(text), "".join(reasoning), final, logprobs)
