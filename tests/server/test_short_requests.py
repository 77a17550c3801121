"""Short requests ask the model's engine once: each engine call is a round trip to the
model's worker process, which an editor's single embedding or token count pays for in
latency (issue 47)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, GenerationParams, Message
from desktop.root.context import build_context
from desktop.server._asgi import services_for
from desktop.server._embeddings import MAX_INPUT_TOKENS
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner, key_store

# The engine calls a worker answers with a round trip each.
WATCHED = {
    "tokenize",
    "detokenize",
    "embed",
    "embed_counted",
    "prompt_tokens",
    "render",
    "count_chat_tokens",
}


class CountingEngine:
    """A real engine whose calls are noted by name, in order."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.engine, name)
        if name not in WATCHED:
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return value(*args, **kwargs)

        return call


@pytest.fixture
def counted(
    tmp_path: Path, tiny_embed: Path, tiny_chat: Path
) -> Iterator[tuple[str, str, list[CountingEngine]]]:
    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path / "home")})
    ctx.resolver.register(tiny_embed)
    ctx.resolver.register(tiny_chat)
    engines: list[CountingEngine] = []

    def start(spec: Any) -> Any:
        engines.append(CountingEngine(load_engine(spec)))
        return engines[-1]

    scheduler = Scheduler(start, ctx.resolver)
    keys = key_store(ctx.paths.data_dir)
    key = keys.create("tests")
    runner = ServerRunner(
        services_for(
            scheduler,
            ResolverDirectory(ctx.resolver),
            ServerSettings().model_copy(update={"port": 0}),
            keys,
        )
    )
    runner.start()
    try:
        yield runner.url, key, engines
    finally:
        runner.stop()
        scheduler.close()
        ctx.close()


def _embed(url: str, key: str) -> Callable[[str], int]:
    def embed(text: str) -> int:
        with openai.OpenAI(base_url=url, api_key=key, max_retries=0) as client:
            answer = client.embeddings.create(model="tiny-embed", input=text)
        assert len(answer.data) == 1 and answer.data[0].embedding
        return answer.usage.prompt_tokens

    return embed


def test_a_short_embedding_is_one_engine_call_and_still_counts_its_tokens(
    counted: tuple[str, str, list[CountingEngine]],
) -> None:
    url, key, engines = counted
    embed = _embed(url, key)
    text = "the lighthouse keeper found a bottle"
    tokens = embed(text)
    [engine] = engines
    assert engine.calls == ["embed_counted"]  # no tokenize round trip before it
    assert tokens == len(engine.engine.tokenize(text, add_bos=True, special=False))
    # Served from the cache: no embedding, but its tokens still counted by the model.
    engine.calls.clear()
    assert embed(text) == tokens
    assert engine.calls == ["tokenize"]


def test_an_input_near_the_limit_is_still_measured_before_it_is_embedded(
    counted: tuple[str, str, list[CountingEngine]],
) -> None:
    url, key, engines = counted
    text = "a " * (MAX_INPUT_TOKENS // 2)  # within the limit, but too long to tell unread
    assert _embed(url, key)(text) > MAX_INPUT_TOKENS // 2
    assert engines[0].calls == ["tokenize", "embed_counted"]


def test_counting_a_short_chats_tokens_is_one_engine_call(
    counted: tuple[str, str, list[CountingEngine]],
) -> None:
    url, key, engines = counted
    messages = [{"role": "user", "content": "Count me, please."}]
    root = url.removesuffix("/v1")
    with httpx.Client(base_url=root, headers={"x-api-key": key}) as client:
        answer = client.post(
            "/v1/messages/count_tokens",
            json={"model": "tiny-chat", "messages": messages, "system": "Be brief."},
        )
    assert answer.status_code == 200, answer.text
    [engine] = engines
    assert engine.calls == ["count_chat_tokens"]
    chat = ChatCall.of(
        (Message("system", "Be brief."), Message("user", "Count me, please.")), GenerationParams()
    )
    expected = len(engine.engine.prompt_tokens(engine.engine.render(chat)))
    assert answer.json()["input_tokens"] == expected
