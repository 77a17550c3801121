"""A local engine that fails mid-answer: the stream ends with the protocol's error event.

The engine is the real tiny model with a fault injected after three chunks (a llama.cpp
failure cannot be provoked on demand); the server, clients and sockets are real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.base.errors import EdgeDeskError
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import Delta, ModelSpec
from desktop.root.context import build_context
from desktop.server._asgi import services_for
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner

HI = [{"role": "user", "content": "hello world"}]
FAULT = "the model was unloaded; send the request again"


class FailingEngine:
    """The real engine; every stream raises after its third chunk."""

    def __init__(self, engine: Any, error: Exception) -> None:
        self.engine = engine
        self.report = engine.report
        self.error = error
        self.sent: list[str] = []  # the text each stream produced before failing

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def _fail(self, stream: Iterator[Delta]) -> Iterator[Delta]:
        text: list[str] = []
        try:
            for n, chunk in enumerate(stream):
                if n == 3:
                    self.sent.append("".join(text))
                    raise self.error
                text.append(chunk.text)
                yield chunk
        finally:
            stream.close()  # type: ignore[attr-defined]

    def stream_chat(self, *args: Any, **kwargs: Any) -> Iterator[Delta]:
        return self._fail(self.engine.stream_chat(*args, **kwargs))


@pytest.fixture(scope="module", params=["edgedesk", "bug"])
def failing(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path
) -> Iterator[tuple[str, FailingEngine]]:
    """A server whose tiny-chat fails mid-answer; its URL and the engine."""
    error: Exception = EdgeDeskError(FAULT) if request.param == "edgedesk" else RuntimeError("boom")
    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path_factory.mktemp("fail"))})
    ctx.resolver.register(tiny_chat)
    engines: list[FailingEngine] = []

    def load(spec: ModelSpec) -> FailingEngine:
        engines.append(FailingEngine(load_engine(spec), error))
        return engines[-1]

    scheduler = Scheduler(load, ctx.resolver)
    runner = ServerRunner(
        services_for(
            scheduler,
            ResolverDirectory(ctx.resolver),
            ServerSettings(require_key=False).model_copy(update={"port": 0}),
            None,
        )
    )
    runner.start()
    try:
        scheduler.load("tiny-chat")
        yield runner.url, engines[0]
    finally:
        runner.stop()
        scheduler.close()
        ctx.close()


def _expected(engine: FailingEngine) -> str:
    return (
        FAULT
        if isinstance(engine.error, EdgeDeskError)
        else "internal error (RuntimeError); see the server log"
    )


def test_openai_chat_stream(failing: tuple[str, FailingEngine]) -> None:
    url, engine = failing
    text: list[str] = []
    with (
        openai.OpenAI(base_url=url, api_key="x", max_retries=0) as client,
        pytest.raises(openai.APIError) as caught,
    ):
        stream = client.chat.completions.create(
            model="tiny-chat",
            messages=HI,  # type: ignore[arg-type]
            max_tokens=30,
            stream=True,
        )
        for chunk in stream:
            text.append(chunk.choices[0].delta.content or "" if chunk.choices else "")
    assert "".join(text) == engine.sent[-1] and engine.sent[-1]
    assert caught.value.message == _expected(engine)
    assert "boom" not in caught.value.message  # a bug's details stay in the server log


def test_anthropic_stream(failing: tuple[str, FailingEngine]) -> None:
    url, engine = failing
    text: list[str] = []
    with (
        anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="x", max_retries=0) as claude,
        pytest.raises(anthropic.APIStatusError) as caught,
    ):
        with claude.messages.stream(model="tiny-chat", max_tokens=30, messages=HI) as stream:  # type: ignore[arg-type]
            text.extend(stream.text_stream)
    assert "".join(text) == engine.sent[-1]
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["message"] == _expected(engine)


def test_responses_and_ollama_streams(failing: tuple[str, FailingEngine]) -> None:
    url, engine = failing
    with httpx.stream(
        "POST",
        f"{url}/responses",
        timeout=60,
        json={"model": "tiny-chat", "input": "hello", "max_output_tokens": 30, "stream": True},
    ) as reply:
        events = [json.loads(line[6:]) for line in reply.iter_lines() if line.startswith("data: ")]
    assert events[-1]["type"] == "response.failed"
    assert events[-1]["response"]["error"]["message"] == _expected(engine)
    root = url.removesuffix("/v1")
    with httpx.stream(
        "POST",
        f"{root}/api/chat",
        timeout=60,
        json={"model": "tiny-chat", "messages": HI, "options": {"num_predict": 30}},
    ) as reply:
        lines = [json.loads(line) for line in reply.iter_lines() if line]
    assert lines[-1] == {"error": _expected(engine)}
    assert "".join(line["message"]["content"] for line in lines[:-1]) == engine.sent[-1]
