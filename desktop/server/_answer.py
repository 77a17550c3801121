"""An answer as every protocol renders it: pieces as they come, then how it ended.

All four protocols (OpenAI chat and completions, Responses, Anthropic, Ollama) turn the
engine's chunks into their own events from the same items: one ``Piece`` per chunk
(its reasoning, its words, its logprobs), then one ``Ending`` with the calls the engine
found. The engine parsed the calls already (``ChatCall``: a local model's markup held
back from the words, a remote's calls passed through), so nothing here reads text for
them. A whole (not streamed) answer is a ``WholeAnswer``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from desktop.engine import Delta, TokenLogprob, ToolCall


def finish_reason(chunk: Delta, calls: Sequence[ToolCall] = ()) -> str:
    """How an answer ended in OpenAI's words, which every protocol maps from (``timeout``
    reads as ``length``)."""
    if calls:
        return "tool_calls"
    return "stop" if chunk.finish_reason in ("stop", "cancelled") else "length"


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
    final: Delta

    @property
    def stop(self) -> Literal["stop", "length", "tool_calls"]:
        """Why the answer ended, in the engine-neutral words the protocols map from."""
        reason = finish_reason(self.final, self.calls)
        return (
            "tool_calls" if reason == "tool_calls" else ("length" if reason == "length" else "stop")
        )


def answer_pieces(chunks: Iterable[Delta]) -> Iterator[Piece | Ending]:
    """A Piece per chunk as it comes, then the Ending with the calls the chunks carried.

    ``ADMITTED`` becomes an empty Piece: the answer starts there, before any words."""
    final = Delta(finish_reason="stop")
    calls: tuple[ToolCall, ...] = ()
    for chunk in chunks:
        if chunk.admitted:
            yield Piece()
            continue
        final = chunk
        calls += chunk.tool_calls
        yield Piece(chunk.text, chunk.reasoning, chunk.logprobs)
    yield Ending(calls, final)


@dataclass(frozen=True)
class WholeAnswer:
    """A drained answer: its text, reasoning, final chunk, logprobs and tool calls."""

    text: str
    reasoning: str
    final: Delta
    logprobs: list[TokenLogprob] = field(default_factory=list)
    calls: tuple[ToolCall, ...] = ()

    def split(self) -> tuple[str, tuple[ToolCall, ...]]:
        """The words (trimmed beside tool calls) and the tool calls the engine found."""
        return (self.text.strip() if self.calls else self.text), self.calls


def drain(chunks: Iterable[Delta]) -> WholeAnswer:
    """Read an answer to its end (blocks): the last chunk is the final one."""
    text: list[str] = []
    reasoning: list[str] = []
    logprobs: list[TokenLogprob] = []
    calls: tuple[ToolCall, ...] = ()
    final = Delta(finish_reason="stop")  # the engine always sends one; be safe
    for chunk in chunks:
        if chunk.admitted:
            continue
        text.append(chunk.text)
        reasoning.append(chunk.reasoning)
        logprobs.extend(chunk.logprobs)
        calls += chunk.tool_calls
        final = chunk
    return WholeAnswer("".join(text), "".join(reasoning), final, logprobs, calls)
