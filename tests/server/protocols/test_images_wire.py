"""Pictures in every protocol's request become ``Message.images`` with a marker where the
part stood; what is not a picture, or a URL to fetch, is a 400 that says why (pure)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from desktop.base.errors import InvalidRequest
from desktop.engine._types import MEDIA_MARKER, Message
from desktop.server import _image_parts as im
from desktop.server._protocols.ollama import requests as orq
from desktop.server._protocols.ollama import translate as ow
from desktop.server._protocols.openai import schemas as s
from desktop.server._protocols.openai import translate as oq
from tests.engine.test_images import picture
from tests.fixtures.pictures import png
from tests.fixtures.vision import b64, data_url
from tests.server import bodies

pytestmark = pytest.mark.fast

PNG = png(2, 2)
RED, BLUE = png(2, 2, rgb=(255, 0, 0)), png(2, 2, rgb=(0, 0, 255))
JPEG = picture("JPEG")  # a real one: the checker walks its segments


def _chat(content: Any, role: str = "user") -> list[Message]:
    req = s.ChatCompletionRequest.model_validate(
        {"model": "m", "messages": [{"role": role, "content": content}]}
    )
    return oq.to_messages(req.messages)


def test_an_image_is_its_bytes_with_the_sniffed_type_and_digest() -> None:
    image = im.image_from_url(data_url(PNG), where="x", param="x")
    assert image.data == PNG and image.mime == "image/png"
    assert image.sha256 == hashlib.sha256(PNG).hexdigest()
    # The declared type is not believed: the bytes say JPEG.
    assert im.image_from_url(data_url(JPEG, "image/png"), where="x", param="x").mime == "image/jpeg"
    # Line-wrapped, unpadded and URL-safe base64 are all read.
    wrapped = "\n".join(b64(PNG)[i : i + 60] for i in range(0, len(b64(PNG)), 60))
    assert im.image_from_base64(wrapped, where="x", param="x").data == PNG
    assert im.image_from_base64(b64(PNG).rstrip("="), where="x", param="x").data == PNG
    urlsafe = b64(PNG).replace("+", "-").replace("/", "_")
    assert im.image_from_base64(urlsafe, where="x", param="x").data == PNG


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://example.com/cat.png", "not fetched"),
        ("HTTP://example.com/cat.png", "not fetched"),
        ("ftp://example.com/cat.png", "data URL"),
        ("data:image/png," + "abc", "base64"),
        ("data:image/png;base64,@@@not base64@@@", "not valid base64"),
        (data_url(b"PK\x03\x04" + bytes(40)), "ZIP archive"),
        (data_url(b"RIFF\x00\x00\x00\x00WEBPVP8 " + bytes(20)), "damaged: its WEBP header"),
        (data_url(b"%PDF-1.7\n"), "PDF"),
        (data_url(b"hello"), "not a picture"),
        ("data:image/png;base64,", "base64 text"),
    ],
)
def test_what_is_not_an_inline_picture_is_refused_saying_why(url: str, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says) as caught:
        im.image_from_url(url, where="messages[0].content[1]", param="p")
    assert caught.value.param == "p" and "messages[0].content[1]" in caught.value.message


def test_openai_image_url_parts_become_images_marked_where_they_stood() -> None:
    [message] = _chat(
        [
            {"type": "text", "text": "Compare "},
            {"type": "image_url", "image_url": {"url": data_url(RED), "detail": "low"}},
            {"type": "text", "text": " with "},
            {"type": "image_url", "image_url": data_url(BLUE)},
        ]
    )  # vLLM's form
    assert message.content == f"Compare {MEDIA_MARKER} with {MEDIA_MARKER}"
    assert [i.data for i in message.images] == [RED, BLUE]
    [plain] = _chat([{"type": "text", "text": "no pictures"}])
    assert plain.images == () and plain.content == "no pictures"


def test_openai_refusals_name_the_part() -> None:
    with pytest.raises(InvalidRequest, match="not fetched") as caught:
        _chat([{"type": "image_url", "image_url": {"url": "https://x.org/a.png"}}])
    assert caught.value.param == "messages.0.content.0.image_url"
    with pytest.raises(InvalidRequest, match="user messages"):
        _chat([{"type": "image_url", "image_url": {"url": data_url(PNG)}}], role="assistant")
    with pytest.raises(InvalidRequest, match="input_audio"):
        _chat([{"type": "image_url", "image_url": {"url": data_url(PNG)}}, {"type": "input_audio"}])


def test_responses_input_image_takes_a_data_url_or_bare_base64() -> None:
    [message] = bodies.responses_messages(
        None,
        [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is this?"},
                    {"type": "input_image", "image_url": data_url(RED), "detail": "auto"},
                    {"type": "input_image", "image_url": b64(BLUE)},
                ],
            }
        ],
    )
    assert message.content == f"What is this?{MEDIA_MARKER}{MEDIA_MARKER}"
    assert [i.data for i in message.images] == [RED, BLUE]
    for part, says in (
        ({"file_id": "file-1"}, "file_id"),
        ({"image_url": "https://x.org/a.png"}, "not fetched"),
    ):
        with pytest.raises(InvalidRequest, match=says) as caught:
            bodies.responses_messages(
                None, [{"role": "user", "content": [{"type": "input_image", **part}]}]
            )
        assert caught.value.param == "input.0.content.0.image_url"


def test_anthropic_image_blocks_in_user_turns_and_tool_results() -> None:
    source = {"type": "base64", "media_type": "image/png", "data": b64(RED)}
    messages = bodies.anthropic_messages(
        None,
        [
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": source},
                    {"type": "text", "text": "What is in it?"},
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [
                            {"type": "text", "text": "here"},
                            {"type": "image", "source": {**source, "data": b64(BLUE)}},
                        ],
                    }
                ],
            },
        ],
    )
    user, _, tool = messages
    assert (user.content, [i.data for i in user.images]) == (
        f"{MEDIA_MARKER}\nWhat is in it?",
        [RED],
    )
    assert (tool.role, tool.content, [i.data for i in tool.images]) == (
        "tool",
        f"here\n{MEDIA_MARKER}",
        [BLUE],
    )
    with pytest.raises(InvalidRequest, match="not fetched") as caught:
        bodies.anthropic_messages(
            None,
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "url", "url": "https://x.org/a.png"}}
                    ],
                }
            ],
        )
    assert caught.value.param == "messages.0.content.0.source.url"
    with pytest.raises(InvalidRequest, match="source type 'file'"):
        bodies.anthropic_messages(
            None,
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}],
                }
            ],
        )


def test_ollama_images_go_before_the_words_of_their_message() -> None:
    [message] = bodies.ollama_messages(
        [{"role": "user", "content": "Which colour?", "images": [b64(RED), b64(BLUE)]}]
    )
    assert message.content == f"{MEDIA_MARKER}{MEDIA_MARKER}\nWhich colour?"
    assert [i.data for i in message.images] == [RED, BLUE]
    req = orq.GenerateRequest.model_validate(
        {"model": "m", "prompt": "Describe it", "system": "Be brief.", "images": [b64(PNG)]}
    )
    system, user = ow.generate_messages(req)
    assert system.images == () and user.images[0].data == PNG
    assert user.content == f"{MEDIA_MARKER}\nDescribe it"
    with pytest.raises(InvalidRequest, match="user messages"):
        bodies.ollama_messages([{"role": "assistant", "content": "x", "images": [b64(PNG)]}])
    with pytest.raises(InvalidRequest, match="list of base64"):
        bodies.ollama_messages([{"role": "user", "content": "x", "images": b64(PNG)}])


def test_a_model_that_cannot_see_is_named_and_never_sent_the_picture() -> None:
    asked: list[str] = []

    def sees(model: str) -> bool:
        asked.append(model)
        return model == "eyes"

    text_only = [Message("user", "hi")]
    im.check_images(text_only, model="blind", sees=sees)
    assert asked == []  # no picture: the model is not even resolved
    pictured = _chat([{"type": "image_url", "image_url": {"url": data_url(PNG)}}])
    with pytest.raises(InvalidRequest, match="'blind' cannot see images") as caught:
        im.check_images(pictured, model="blind", sees=sees)
    assert caught.value.param == "model"
    im.check_images(pictured, model="eyes", sees=sees)
    # Text that spells the marker would shift the pictures: refused, not guessed at.
    spelled = _chat(
        [
            {"type": "text", "text": f"see {MEDIA_MARKER}"},
            {"type": "image_url", "image_url": {"url": data_url(PNG)}},
        ]
    )
    with pytest.raises(InvalidRequest, match="remove it"):
        im.check_images(spelled, model="eyes", sees=sees)


def test_a_tool_output_holding_a_picture_reaches_the_model_as_the_tools_images() -> None:
    # Codex's view_image answers its function call with the picture it read from disk.
    call = {
        "type": "function_call",
        "call_id": "c1",
        "name": "view_image",
        "arguments": '{"path": "chart.png"}',
    }
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [{"type": "input_image", "image_url": data_url(RED)}],
    }
    messages = bodies.responses_messages(
        None, [{"role": "user", "content": "Look at chart.png"}, call, output]
    )
    tool = messages[-1]
    assert (tool.role, tool.tool_call_id, tool.name) == ("tool", "c1", "view_image")
    assert tool.content == MEDIA_MARKER and [i.data for i in tool.images] == [RED]
    im.check_images(messages, model="eyes", sees=lambda _m: True)  # one marker per picture
    with pytest.raises(InvalidRequest, match="cannot see images"):
        im.check_images(messages, model="blind", sees=lambda _m: False)
    text_only = {**output, "output": [{"type": "input_text", "text": "no picture"}]}
    assert bodies.responses_messages(None, [call, text_only])[-1].content == "no picture"
