"""The pre-encoded text events are byte-for-byte the events the dict path builds."""

from __future__ import annotations

import json

import pytest

from desktop.engine._types import TokenLogprob, Usage
from desktop.server._protocols.openai import events as oa
from desktop.server._protocols.openai import sse
from desktop.server._protocols.openai.sse import ChatEvents, CompletionEvents

pytestmark = pytest.mark.fast

TEXTS = [
    "",
    "hello",
    " world",
    'quo"te \\ back',
    "line\nbreak\ttab\r",
    "\x00\x1f\x7f",
    "héllo wörld",
    "你好",
    "🦙 emoji",
    "\u2028\u2029",
    "</script>",
    '{"a": 1}',
]
IDS = {"request_id": "chatcmpl-req_1", "model": "tiny-chat", "created": 1700000000}
_KEYS = {"model": "model", "request_id": "id"}  # where each id lands in an event


@pytest.mark.parametrize("include_usage", [False, True])
def test_chat_text_events_match_the_dict_path(include_usage: bool) -> None:
    events = ChatEvents(**IDS, include_usage=include_usage)
    for text in TEXTS:
        slow = oa.sse(oa.chat_delta(**IDS, delta={"content": text}, with_usage_field=include_usage))
        assert events.content(text) == slow
        assert json.loads(events.content(text)[6:])["choices"][0]["delta"]["content"] == text


def test_completion_text_events_match_the_dict_path() -> None:
    ids = {**IDS, "request_id": "cmpl-req_1"}
    events = CompletionEvents(**ids)
    for text in TEXTS:
        assert events.text(text) == oa.sse(oa.completion_delta(**ids, text=text))


def test_other_events_are_the_dict_path() -> None:
    chat = ChatEvents(**IDS, include_usage=True)
    lp = [TokenLogprob("a", -0.5)]
    assert chat.event({"reasoning_content": "hm"}, "stop", lp) == oa.sse(
        oa.chat_delta(
            **IDS,
            delta={"reasoning_content": "hm"},
            finish="stop",
            with_usage_field=True,
            logprobs=lp,
        )
    )
    usage = Usage(prompt_tokens=3, completion_tokens=2)
    assert chat.usage(usage) == oa.sse(oa.chat_delta(**IDS, delta={}, usage=oa.usage_out(usage)))
    cmpl = CompletionEvents(**IDS)
    assert cmpl.event("", finish="length") == oa.sse(
        oa.completion_delta(**IDS, text="", finish="length")
    )
    assert cmpl.usage(usage) == oa.sse(
        oa.completion_delta(**IDS, text="", usage=oa.usage_out(usage))
    )


@pytest.mark.parametrize("field", ["model", "request_id"])
def test_an_id_equal_to_the_splice_marker_falls_back_to_the_dict_path(field: str) -> None:
    # Only an id that *is* the marker serialises to the same JSON string, so the event
    # holds it twice and cannot be split in two: the template must not be used.
    odd = {**IDS, field: sse._MARKER}
    assert sse._template(oa.completion_delta(**odd, text=sse._MARKER)) is None
    chat, cmpl = ChatEvents(**odd, include_usage=False), CompletionEvents(**odd)
    for text in TEXTS:
        assert chat.content(text) == oa.sse(oa.chat_delta(**odd, delta={"content": text}))
        assert cmpl.text(text) == oa.sse(oa.completion_delta(**odd, text=text))
        assert json.loads(chat.content(text)[6:])[_KEYS[field]] == sse._MARKER


def test_an_id_merely_containing_the_marker_keeps_the_fast_path() -> None:
    odd = {**IDS, "model": "x" + sse._MARKER + "y"}  # escaped inside other text: no clash
    assert sse._template(oa.completion_delta(**odd, text=sse._MARKER)) is not None
    assert ChatEvents(**odd, include_usage=False).content("hi") == oa.sse(
        oa.chat_delta(**odd, delta={"content": "hi"})
    )
    assert CompletionEvents(**odd).text("hi") == oa.sse(oa.completion_delta(**odd, text="hi"))
