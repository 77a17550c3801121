"""A real uvicorn server on a free loopback port, over the tiny test models."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import ServerSettings
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import Delta
from desktop.root.context import AppContext, build_context
from desktop.server._runner import ServerRunner
from desktop.server._security import KeyStore


@dataclass
class Served:
    """A running server and what a test needs to talk to it."""

    runner: ServerRunner
    ctx: AppContext
    keys: KeyStore
    key: str
    scheduler: Scheduler
    journal: list[str] = field(default_factory=list)  # what slowed engines did, in order

    @property
    def url(self) -> str:
        return self.runner.url

    @property
    def root(self) -> str:
        return self.runner.url.removesuffix("/v1")


class SlowEngine:
    """The real engine, slowed per chunk so a test can hold a request open; counts chunks."""

    def __init__(self, engine: Any, delay_s: float, journal: list[str]) -> None:
        self.engine = engine
        self.delay_s = delay_s
        self.report = engine.report
        self.produced = 0
        self.journal = journal

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def _slow(self, stream: Iterator[Delta]) -> Iterator[Delta]:
        for chunk in stream:
            self.produced += 1
            self.journal.append("chunk")
            time.sleep(self.delay_s)
            yield chunk

    def stream_chat(self, *args: Any, **kwargs: Any) -> Iterator[Delta]:
        return self._slow(self.engine.stream_chat(*args, **kwargs))

    def stream_completion(self, *args: Any, **kwargs: Any) -> Iterator[Delta]:
        return self._slow(self.engine.stream_completion(*args, **kwargs))

    def rerank(self, *args: Any, **kwargs: Any) -> list[float]:
        self.journal.append("rerank")
        scores: list[float] = self.engine.rerank(*args, **kwargs)
        return scores


def named_events(raw: bytes) -> list[dict[str, Any]]:
    """The bodies of a stream of named SSE events, each checked to carry its own name
    (``event: X`` over a ``data:`` body whose ``type`` is X, as Anthropic and Responses send)."""
    out = []
    for block in raw.decode().split("\n\n"):
        if block:
            name, data = block.split("\n")
            body = json.loads(data.removeprefix("data: "))
            assert name == "event: " + body["type"]
            out.append(body)
    return out


@contextmanager
def serve(
    home: Path,
    models: list[Path],
    delay_s: float = 0.0,
    parallel: int | None = None,
    **settings: Any,
) -> Iterator[Served]:
    """Start a server with ``settings`` over ``models``; stop it and free models after.

    ``parallel`` sets ``engine.parallel`` (slots per model) for tests about queueing.
    """
    ctx = build_context(
        environ={"EDGEDESK_HOME": str(home)},
        cli_settings={"engine.parallel": parallel} if parallel else None,
    )
    # Port 0: the runner binds the socket itself and reports the real port (no race with
    # another process taking a port found free a moment before).
    server_settings = ServerSettings(**settings).model_copy(update={"port": 0})
    keys = ctx.key_store
    key = keys.create("tests")
    journal: list[str] = []
    if delay_s:
        scheduler = Scheduler(
            lambda spec: SlowEngine(load_engine(spec), delay_s, journal),
            ctx.resolver,
            queue_max=server_settings.queue_max,
        )
        AppContext.scheduler.of(ctx).set(scheduler)
    # Wired as the product wires it (the composition root), with these settings.
    runner = ctx.new_api_server(settings=server_settings, model_paths=models)
    scheduler = ctx.scheduler
    runner.start()
    try:
        yield Served(runner, ctx, keys, key, scheduler, journal)
    finally:
        runner.stop()
        ctx.close()  # the scheduler too


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path, tiny_embed: Path
) -> Iterator[Served]:
    """One shared server with a key, the tiny chat and embedding models."""
    with serve(tmp_path_factory.mktemp("srv"), [tiny_chat, tiny_embed]) as served:
        yield served


@pytest.fixture
def client(server: Served):
    import openai

    with openai.OpenAI(base_url=server.url, api_key=server.key, max_retries=0, timeout=60) as c:
        yield c
