"""The engine side parses a model's tool calls once (``toolcalls.gate_calls``): words
stream, call markup is held back, the calls arrive structured on the final chunk."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

from desktop.engine._prompting.toolcalls import gate_calls
from desktop.engine._types import ADMITTED, ChatCall, Delta, Message, ToolCall, ToolSpec, Usage

WEATHER = ToolSpec(
    "get_weather", None, {"type": "object", "properties": {"city": {"type": "string"}}}
)
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
END = Delta(finish_reason="stop", usage=Usage(9, 4))


def _call(**switches: bool) -> ChatCall:
    return ChatCall.of([Message("user", "weather?")], tools=[WEATHER], **switches)


def _ids() -> itertools.count[int]:
    return itertools.count()


def _gated(pieces: list[str], call: ChatCall) -> list[Delta]:
    numbers = _ids()
    chunks = [ADMITTED, *(Delta(text=p) for p in pieces), END]
    return list(gate_calls(chunks, call, lambda: f"call_{next(numbers)}"))


def test_words_stream_the_markup_is_held_and_the_call_comes_structured() -> None:
    out = _gated(["Let me ", "look.", CALL[:20], CALL[20:]], _call())
    assert out[0] is ADMITTED
    assert [c.text for c in out[1:-1]] == ["Let me ", "look.", "", ""]
    final = out[-1]
    assert final.is_final and final.usage == END.usage and final.text == ""
    assert final.tool_calls == (ToolCall("call_0", "get_weather", '{"city": "Oslo"}'),)
    assert "<tool_call>" not in "".join(c.text for c in out)


def test_without_tools_the_chunks_pass_unchanged() -> None:
    chunks = [Delta(text=CALL), END]
    assert list(gate_calls(chunks, ChatCall.of([Message("user", "hi")]))) == chunks


def test_a_forced_call_holds_every_word_until_the_end() -> None:
    out = _gated(["Sure: ", CALL], _call(forced=True))
    assert [c.text for c in out[1:-1]] == ["", ""]
    assert [c.name for c in out[-1].tool_calls] == ["get_weather"]


def test_words_that_were_not_a_call_come_out_before_the_end() -> None:
    out = _gated(['{"note": ', "1}"], _call())  # opens like a bare call: held, then given back
    assert "".join(c.text for c in out) == '{"note": 1}' and out[-1].tool_calls == ()


def test_a_bare_call_streams_when_the_caller_takes_words_back() -> None:
    bare = json.dumps({"name": "get_weather", "arguments": {"city": "Oslo"}})
    held = _gated([bare[:10], bare[10:]], _call())
    assert "".join(c.text for c in held) == "" and held[-1].tool_calls
    streamed = _gated([bare[:10], bare[10:]], _call(stream_bare=True))
    assert "".join(c.text for c in streamed[1:-1]) == bare  # shown; the chat core hides it
    assert [c.name for c in streamed[-1].tool_calls] == ["get_weather"]


def test_the_final_chunks_own_words_and_reasoning_come_before_the_ending() -> None:
    final = Delta(text="Done.", reasoning="hm", finish_reason="stop", usage=Usage(1, 1))
    out = list(gate_calls([Delta(text=CALL), final], _call()))
    assert (out[-2].text, out[-2].reasoning, out[-2].is_final) == ("", "hm", False)
    assert out[-1].text == "Done." and out[-1].finish_reason == "stop"
    assert out[-1].reasoning == "" and len(out[-1].tool_calls) == 1


def test_closing_the_stream_ends_the_engines_at_once() -> None:
    """A client that leaves closes the gated stream; the engine's stream (its slot) ends
    with it."""
    ended: list[str] = []

    def engine() -> Iterator[Delta]:
        try:
            yield Delta(text="Let me ")
            yield Delta(text="look.")
            yield END
        finally:
            ended.append("closed")

    stream = gate_calls(engine(), _call())
    assert next(stream).text == "Let me "
    stream.close()
    assert ended == ["closed"]
