"""Pictures through every API with the official clients against a real uvicorn: the
request reaches the engine with its images in order, a model that cannot see is
refused by name, and the listings say which models see. A scripted engine stands in
for the model: what is asserted is what the server hands it, not what it sees."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.base.errors import VisionUnsupported
from desktop.engine._types import MEDIA_MARKER, ChatCall, Message
from desktop.server._asgi import services_for
from desktop.server._runner import ServerRunner
from tests.chat.scripted import Scripted
from tests.fixtures.pictures import png
from tests.fixtures.vision import b64, data_url

RED, BLUE = png(2, 2, rgb=(255, 0, 0)), png(2, 2, rgb=(0, 0, 255))


class Models:
    """Chat models: ``eyes`` has a vision projector, ``blind`` does not, and ``claims``
    is listed as seeing but its engine refuses pictures (its projector did not load)."""

    def ids(self) -> list[str]:
        return ["eyes", "blind", "claims"]

    def has(self, model: str) -> bool:
        return model in self.ids()

    def kind(self, model: str) -> tuple[str, int | None]:
        return "chat", None

    def describe(self, model: str) -> dict[str, Any]:
        return {"kind": "chat", "architecture": "llama", "vision": self.vision(model)}

    def vision(self, model: str) -> bool:
        return model in ("eyes", "claims")


class Engine(Scripted):
    """The scripted engine as the server's scheduler (nothing loaded to report)."""

    def loaded(self) -> list[Any]:
        return []

    def stream_chat(self, model: str, call: ChatCall, cancel: Any = None) -> Any:
        if model == "claims":
            return self._refuse(model)
        return super().stream_chat(model, call, cancel)

    @staticmethod
    def _refuse(model: str) -> Iterator[Any]:
        """The engine's own refusal, raised as the real one is: when the stream starts."""
        raise VisionUnsupported(model)
        yield


@pytest.fixture
def engine() -> Engine:
    return Engine("A red square.")


@pytest.fixture
def url(engine: Engine) -> Iterator[str]:
    runner = ServerRunner(
        services_for(
            engine,
            Models(),  # type: ignore[arg-type]
            ServerSettings().model_copy(update={"port": 0}),
            None,
        )
    )
    runner.start()
    try:
        yield runner.url
    finally:
        runner.stop()


def _seen(engine: Engine) -> list[tuple[str, str, list[bytes]]]:
    """What the engine was handed last: each message's role, text and picture bytes."""
    return [(m.role, m.content, [i.data for i in m.images]) for m in engine.prompts[-1]]


def test_openai_chat_image_parts_reach_the_engine(url: str, engine: Engine) -> None:
    with openai.OpenAI(base_url=url, api_key="none", max_retries=0) as client:
        answer = client.chat.completions.create(
            model="eyes",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Which is red, "},
                        {"type": "image_url", "image_url": {"url": data_url(RED)}},
                        {"type": "text", "text": " or "},
                        {
                            "type": "image_url",
                            "image_url": {"url": data_url(BLUE), "detail": "low"},
                        },
                        {"type": "text", "text": "?"},
                    ],
                }
            ],
        )
        assert answer.choices[0].message.content == "A red square."
        assert _seen(engine) == [
            ("user", f"Which is red, {MEDIA_MARKER} or {MEDIA_MARKER}?", [RED, BLUE])
        ]
        streamed = client.chat.completions.create(
            model="eyes",
            stream=True,
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": data_url(RED)}}],
                }
            ],
        )
        assert (
            "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
            == "A red square."
        )
        assert _seen(engine) == [("user", MEDIA_MARKER, [RED])]


def test_refusals_are_400s_that_say_why(url: str, engine: Engine) -> None:
    picture = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": data_url(RED)}},
            ],
        }
    ]
    with openai.OpenAI(base_url=url, api_key="none", max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as blind:
            client.chat.completions.create(model="blind", messages=picture)  # type: ignore[arg-type]
        assert "'blind' cannot see images" in blind.value.body["message"]
        assert blind.value.body["param"] == "model"
        with pytest.raises(openai.BadRequestError) as fetch:
            client.chat.completions.create(
                model="eyes",
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
                        ],
                    }
                ],
            )
        assert "not fetched" in fetch.value.body["message"]
        with pytest.raises(openai.BadRequestError) as zipped:
            client.chat.completions.create(
                model="eyes",
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image_url",
                                "image_url": {"url": data_url(b"PK\x03\x04" + bytes(64))},
                            }
                        ],
                    }
                ],
            )
        assert "ZIP archive" in zipped.value.body["message"]
    assert engine.prompts == []  # none of them reached the model


def test_responses_input_image(url: str, engine: Engine) -> None:
    with openai.OpenAI(base_url=url, api_key="none", max_retries=0) as client:
        response = client.responses.create(
            model="eyes",
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "Describe"},
                        {"type": "input_image", "image_url": data_url(BLUE), "detail": "auto"},
                    ],
                }
            ],
        )
        assert response.output_text == "A red square."
        assert _seen(engine) == [("user", f"Describe{MEDIA_MARKER}", [BLUE])]
        with pytest.raises(openai.BadRequestError) as blind:
            client.responses.create(
                model="blind",
                input=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_image", "image_url": data_url(BLUE), "detail": "auto"}
                        ],
                    }
                ],
            )
        assert "'blind' cannot see images" in blind.value.body["message"]


def test_anthropic_image_blocks(url: str, engine: Engine) -> None:
    root = url.removesuffix("/v1")
    source = {"type": "base64", "media_type": "image/png", "data": b64(RED)}
    with anthropic.Anthropic(base_url=root, api_key="none", max_retries=0) as client:
        message = client.messages.create(
            model="eyes",
            max_tokens=20,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "image", "source": source},  # type: ignore[list-item]
                        {"type": "text", "text": "What colour?"},
                    ],
                }
            ],
        )
        assert message.content[0].text == "A red square."  # type: ignore[union-attr]
        assert _seen(engine) == [("user", f"{MEDIA_MARKER}\nWhat colour?", [RED])]
        with pytest.raises(anthropic.BadRequestError) as fetch:
            client.messages.create(
                model="eyes",
                max_tokens=20,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {  # type: ignore[list-item]
                                    "type": "url",
                                    "url": "https://example.com/a.png",
                                },
                            }
                        ],
                    }
                ],
            )
        assert "not fetched" in fetch.value.body["error"]["message"]
        with pytest.raises(anthropic.BadRequestError) as blind:
            client.messages.count_tokens(
                model="blind",
                messages=[{"role": "user", "content": [{"type": "image", "source": source}]}],
            )  # type: ignore[list-item]
        assert "'blind' cannot see images" in blind.value.body["error"]["message"]


def test_ollama_images_and_show(url: str, engine: Engine) -> None:
    root = url.removesuffix("/v1")
    with ollama.Client(host=root, timeout=60) as client:
        reply = client.chat(
            model="eyes",
            messages=[{"role": "user", "content": "Which colour?", "images": [RED]}],
            stream=False,
        )
        assert reply.message.content == "A red square."
        assert _seen(engine) == [("user", f"{MEDIA_MARKER}\nWhich colour?", [RED])]
        generated = client.generate(model="eyes", prompt="Describe", images=[b64(BLUE)])
        assert generated.response == "A red square."
        assert _seen(engine) == [("user", f"{MEDIA_MARKER}\nDescribe", [BLUE])]
        with pytest.raises(ollama.ResponseError) as blind:
            client.chat(
                model="blind",
                messages=[{"role": "user", "content": "Which colour?", "images": [RED]}],
            )
        assert blind.value.status_code == 400 and "'blind' cannot see" in blind.value.error
        with pytest.raises(ollama.ResponseError) as junk:
            client.generate(model="eyes", prompt="x", images=[b64(b"hello")])
        assert "not a picture" in junk.value.error
        assert "vision" in (client.show("eyes").capabilities or [])
        assert "vision" not in (client.show("blind").capabilities or [])


def test_v1_models_says_which_models_see(url: str) -> None:
    listed = httpx.get(f"{url}/models").json()["data"]
    assert {m["id"]: m.get("capabilities") for m in listed} == {
        "eyes": ["completion", "vision"],
        "blind": None,
        "claims": ["completion", "vision"],
    }


def test_anthropic_count_tokens_counts_a_pictures_tokens(
    tiny_chat: Path, tiny_projector: Path
) -> None:
    """Claude Code budgets its context with count_tokens: a picture counts what it costs."""
    from desktop.engine._images import load_image
    from desktop.engine._llama import LlamaEngine
    from desktop.engine._native import LoadOptions
    from desktop.engine._types import GenerationParams
    from desktop.server._protocols.anthropic.routes import prompt_token_count

    def chat(*messages: Message) -> ChatCall:
        return ChatCall(messages, GenerationParams(max_tokens=1, temperature=0))

    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=512, parallel=1, projector=tiny_projector),
        model_id="tiny-vision",
    )
    try:
        picture = load_image(png(8, 8))
        pictured = chat(Message("user", f"what is {MEDIA_MARKER} this", images=(picture,)))
        counted = prompt_token_count(engine, pictured)
        *_, final = engine.stream_chat(pictured)
        assert final.usage is not None and counted == final.usage.prompt_tokens
        text_only = prompt_token_count(engine, chat(Message("user", "what is  this")))
        assert counted > text_only + 8  # the picture's run, not one marker's few tokens
    finally:
        engine.close()


def _refusals(url: str, model: str) -> list[tuple[str, int, str | None, str]]:
    """(route, status, code, message) of a picture sent to ``model`` on every route that
    takes pictures (code None where the protocol's error has none: Anthropic, Ollama)."""
    root = url.removesuffix("/v1")
    found: list[tuple[str, int, str | None, str]] = []
    parts = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": data_url(RED)}},
    ]
    with openai.OpenAI(base_url=url, api_key="none", max_retries=0) as client:
        for stream in (False, True):
            with pytest.raises(openai.BadRequestError) as chat:
                client.chat.completions.create(
                    model=model,
                    messages=[{"role": "user", "content": parts}],  # type: ignore[misc]
                    stream=stream,
                )
            body = chat.value.body
            assert body["param"] == "model"  # type: ignore[index]
            found.append(
                (f"chat stream={stream}", chat.value.status_code, chat.value.code, body["message"])
            )  # type: ignore[index]
        with pytest.raises(openai.BadRequestError) as responses:
            client.responses.create(
                model=model,
                input=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_image", "image_url": data_url(RED), "detail": "auto"}
                        ],
                    }
                ],
            )
        found.append(
            (
                "responses",
                responses.value.status_code,
                responses.value.code,
                responses.value.body["message"],
            )  # type: ignore[index]
        )
    source = {"type": "base64", "media_type": "image/png", "data": b64(RED)}
    with anthropic.Anthropic(base_url=root, api_key="none", max_retries=0) as claude:
        with pytest.raises(anthropic.BadRequestError) as messages:
            claude.messages.create(
                model=model,
                max_tokens=20,
                messages=[{"role": "user", "content": [{"type": "image", "source": source}]}],  # type: ignore[list-item]
            )
        error = messages.value.body["error"]  # type: ignore[index]
        assert error["type"] == "invalid_request_error"
        found.append(("anthropic", messages.value.status_code, None, error["message"]))
    with ollama.Client(host=root, timeout=60) as llama:
        with pytest.raises(ollama.ResponseError) as chatted:
            llama.chat(
                model=model,
                messages=[{"role": "user", "content": "Which colour?", "images": [RED]}],
            )
        found.append(("ollama chat", chatted.value.status_code, None, chatted.value.error))
        with pytest.raises(ollama.ResponseError) as generated:
            llama.generate(model=model, prompt="Describe", images=[b64(RED)])
        found.append(("ollama generate", generated.value.status_code, None, generated.value.error))
    return found


@pytest.mark.parametrize("model", ["blind", "claims"])
def test_every_route_refuses_a_picture_for_a_model_that_cannot_see_alike(
    url: str, engine: Engine, model: str
) -> None:
    """The API's check (``blind``) and the engine's own refusal (``claims``) answer the
    same on every route: 400, ``model_cannot_see_images`` where the protocol has codes,
    and one message naming the model."""
    said = VisionUnsupported(model).message
    assert f"'{model}' cannot see images" in said
    refusals = _refusals(url, model)
    assert len(refusals) == 6
    for route, status, code, message in refusals:
        assert (route, status, message) == (route, 400, said)
        if code is not None:
            assert (route, code) == (route, "model_cannot_see_images")
    assert engine.prompts == []  # no picture reached a model
