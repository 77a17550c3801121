"""The pure translations to and from a remote's OpenAI wire format."""

from __future__ import annotations

import pytest

from desktop.base.errors import InvalidRequest, RemoteError
from desktop.engine._types import ChatCall, GenerationParams, Message
from desktop.remote import _translate as wire
from desktop.remote._registry import normalise_url, parse_policy_entries

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    "given",
    [
        "http://gpu-01:8000",
        "http://gpu-01:8000/",
        "http://gpu-01:8000/v1",
        "http://gpu-01:8000/v1/",
    ],
)
def test_base_url_with_or_without_v1(given: str) -> None:
    assert normalise_url(given) == "http://gpu-01:8000/v1"


def test_policy_entries_need_name_and_url() -> None:
    assert parse_policy_entries(["gpu = https://llm.corp/v1"])[0].base_url == "https://llm.corp/v1"
    with pytest.raises(InvalidRequest):
        parse_policy_entries(["gpu=ftp://x"])


def test_chat_body_carries_sampling_and_asks_for_usage() -> None:
    body = wire.chat_body(
        "glm-4.6",
        ChatCall.of(
            [Message("system", "be brief"), Message("user", "hi")],
            GenerationParams(max_tokens=7, temperature=0.0, stop=("\n",), seed=3),
        ),
    )
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert (body["max_tokens"], body["temperature"], body["stop"], body["seed"]) == (
        7,
        0.0,
        ["\n"],
        3,
    )
    assert body["stream"] and body["stream_options"] == {"include_usage": True}


def test_sse_stops_at_done_and_raises_on_error_events() -> None:
    lines = [
        'data: {"choices": [{"delta": {"content": "a"}}]}',
        "",
        ": keep-alive",
        "data: [DONE]",
        'data: {"never": 1}',
    ]
    assert [p["choices"][0]["delta"]["content"] for p in wire.sse_payloads(lines)] == ["a"]
    with pytest.raises(RemoteError, match="failed mid-answer: out of memory"):
        list(wire.sse_payloads(['data: {"error": {"message": "out of memory"}}']))
    # llama-server's way: an "error:" line instead of a data event.
    with pytest.raises(RemoteError, match="remote 'gpu' failed mid-answer: slot gone"):
        list(
            wire.sse_payloads(
                ['data: {"choices": []}', 'error: {"code": 500, "message": "slot gone"}'],
                "remote 'gpu'",
            )
        )


def test_reasoning_and_finish_are_read() -> None:
    payload = {"choices": [{"delta": {"reasoning_content": "hmm"}, "finish_reason": "length"}]}
    assert wire.delta_of(payload, chat=True) == ("", "hmm", "length")


@pytest.mark.parametrize(
    ("status", "ours", "words"),
    [
        (401, 502, "refused the API key"),
        (429, 429, "rate-limiting"),
        (404, 404, "does not know"),
        (400, 400, "rejected"),
        (500, 502, "failed"),
    ],
)
def test_status_errors_map_to_our_statuses(status: int, ours: int, words: str) -> None:
    error = wire.status_error(status, {"error": {"message": "detail"}}, "gpu")
    assert error.http_status == ours and words in error.message and "detail" in error.message


def test_pictures_go_to_a_remote_as_data_url_parts_where_their_markers_stand() -> None:
    from desktop.engine._types import MEDIA_MARKER, Image

    red, blue = Image(b"\x89PNGred", "image/png", "r"), Image(b"\xff\xd8blue", "image/jpeg", "b")
    before = wire.message_dict(Message("user", "What differs?", images=(red, blue)))
    assert before["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR3JlZA=="}},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9hibHVl"}},
        {"type": "text", "text": "What differs?"},
    ]
    placed = wire.message_dict(
        Message("user", f"This {MEDIA_MARKER} or that {MEDIA_MARKER}?", images=(red, blue))
    )
    assert [p.get("text", p["type"]) for p in placed["content"]] == [
        "This ",
        "image_url",
        " or that ",
        "image_url",
        "?",
    ]
    assert wire.message_dict(Message("user", "no pictures"))["content"] == "no pictures"
