"""Work a request starts is bounded: refused over the documented limits (docs/api.md),
and stopped when its client leaves (no minutes of CPU for nobody).

A 2 MB ``/v1/embeddings`` input once kept computing 4.5 minutes after its client left;
a 1 MB MCP ``search_documents`` query took 197 s and blocked other searches.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.engine._loader import LoadedEngine, load_engine
from desktop.engine._native import LoadOptions
from desktop.engine._scheduler import Scheduler
from desktop.root.context import build_context
from desktop.server._asgi import services_for
from desktop.server._embeddings import MAX_INPUT_TOKENS, MAX_INPUTS, MAX_REQUEST_TOKENS
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner, key_store
from tests.conftest import wait_until
from tests.server.conftest import Served, serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tiny_embed: Path) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("bounded"), [tiny_embed]) as s:
        yield s


def test_oversized_embedding_inputs_get_a_400_in_each_apis_shape(served: Served) -> None:
    long_text = "a " * (MAX_INPUT_TOKENS + 10)  # one token a word for the tiny BERT
    with openai.OpenAI(base_url=served.url, api_key=served.key, max_retries=0) as client:
        started = time.perf_counter()
        with pytest.raises(openai.BadRequestError) as too_long:
            client.embeddings.create(model="tiny-embed", input=long_text)
        assert f"at most {MAX_INPUT_TOKENS}" in too_long.value.message
        assert too_long.value.code is not None or too_long.value.param == "input"
        huge = "a" * 2_000_000  # the 2 MB input: refused before it is even tokenized
        with pytest.raises(openai.BadRequestError) as two_mb:
            client.embeddings.create(model="tiny-embed", input=huge)
        assert "2000000 characters" in two_mb.value.message
        with pytest.raises(openai.BadRequestError) as too_many:
            client.embeddings.create(model="tiny-embed", input=["x"] * (MAX_INPUTS + 1))
        assert f"at most {MAX_INPUTS}" in too_many.value.message
        many_tokens = ["a " * 8000] * (MAX_REQUEST_TOKENS // 8000 + 1)
        with pytest.raises(openai.BadRequestError) as too_much:
            client.embeddings.create(model="tiny-embed", input=many_tokens)
        assert f"at most {MAX_REQUEST_TOKENS}" in too_much.value.message
        assert time.perf_counter() - started < 30  # refusals, not minutes of work
    auth = {"Authorization": f"Bearer {served.key}"}
    for path, body in (
        ("/api/embed", {"model": "tiny-embed", "input": long_text}),
        ("/api/embeddings", {"model": "tiny-embed", "prompt": long_text}),
    ):
        refused = httpx.post(served.root + path, json=body, headers=auth, timeout=60)
        assert refused.status_code == 400, refused.text
        assert f"at most {MAX_INPUT_TOKENS}" in refused.json()["error"]  # Ollama's shape


def _post_and_leave(url: str, key: str, body: dict[str, Any], started: threading.Event) -> None:
    """POST ``body`` over a raw socket; close it (the client leaves) once ``started``."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/embeddings HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(head + payload)
        assert started.wait(60), "the embedding never started"


def test_a_large_embedding_stops_within_a_second_when_its_client_leaves(
    tmp_path: Path, tiny_embed: Path
) -> None:
    decoding = threading.Event()
    decodes: list[float] = []

    def on_decode(_sequences: int) -> None:
        decodes.append(time.perf_counter())
        decoding.set()
        time.sleep(0.02)  # a slower model: ~600 decodes take ~12 s on this tiny one

    def opened(path: Path, options: LoadOptions, **kw: Any) -> LoadedEngine:
        return LoadedEngine(path, options, on_embed_decode=on_decode, **kw)

    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path / "home")})
    ctx.resolver.register(tiny_embed)
    scheduler = Scheduler(lambda spec: load_engine(spec, open_engine=opened), ctx.resolver)
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
        body = {"model": "tiny-embed", "input": ["a " * 8000] * 36}  # ~288k tokens
        _post_and_leave(runner.url, key, body, decoding)
        left = time.perf_counter()

        def cancelled() -> int:
            [model] = scheduler.loaded(counters=True)
            assert model.stats is not None
            return model.stats.embeds_cancelled

        wait_until(lambda: cancelled() == 1, timeout=30, what="the embedding cancelled")
        stopped = time.perf_counter() - left
        assert stopped < 1.0, f"it ran {stopped:.2f} s after its client left"
        after = len(decodes)
        assert after < 36 * 16  # far fewer decodes than the request's ~570 windows
        # Nothing more is computed for it: a later request is served at once.
        with openai.OpenAI(base_url=runner.url, api_key=key, max_retries=0) as client:
            assert client.embeddings.create(model="tiny-embed", input="hello").data
        assert len(decodes) <= after + 1
    finally:
        runner.stop()
        scheduler.close()
        ctx.close()


def test_a_1_mb_search_query_is_refused_at_once(tmp_path: Path, tiny_embed: Path) -> None:
    from desktop.retrieval._search import MAX_QUERY_CHARS

    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path / "home")})
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "zoo.txt").write_text("The zebra lives in the zoo.\n", encoding="utf-8")
        ctx.library.add("zoo", [docs], str(tiny_embed))
        tools = ctx.document_tools()
        started = time.perf_counter()
        refused = tools.search_documents({"query": "zebra " * 200_000})
        assert time.perf_counter() - started < 2.0
        assert refused.is_error and f"at most {MAX_QUERY_CHARS}" in refused.text
        answered = tools.search_documents({"query": "where does the zebra live " * 600})
        assert not answered.is_error and "zoo.txt" in answered.text  # 15 KB: still served
    finally:
        ctx.close()
