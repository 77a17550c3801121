"""Hostile bodies and prompts through a real server over the tiny models (issue 48).

A lone surrogate or an out-of-range number is a 400 in each protocol's shape before any
model is used, so it never holds a slot; a prompt far over the context is refused after a
piece of it; token ids are counted as ids; repeated embedding inputs are embedded once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from desktop.base.config import ServerSettings
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.root.context import AppContext, build_context
from tests.conftest import wait_until
from tests.server.conftest import Served, serve
from tests.server.test_schema import assert_error_shape

SURROGATE = "\ud800"
# The engine calls that mean a request reached a model (and so a slot).
ENGINE_CALLS = frozenset(
    {
        "stream_chat",
        "stream_completion",
        "stream_infill",
        "embed",
        "embed_counted",
        "rerank",
        "tokenize",
        "detokenize",
        "render",
        "prompt_tokens",
        "count_chat_tokens",
    }
)


class RecordingEngine:
    """The real engine; names each call in ``journal`` and keeps what ``embed_counted`` got."""

    def __init__(self, engine: Any, journal: list[str], embedded: list[list[Any]]) -> None:
        self.engine = engine
        self.report = engine.report
        self.journal = journal
        self.embedded = embedded

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.engine, name)
        if name not in ENGINE_CALLS:
            return value

        def called(*args: Any, **kwargs: Any) -> Any:
            self.journal.append(name)
            if name == "embed_counted":
                self.embedded.append(list(args[0]))
            return value(*args, **kwargs)

        return called


@contextmanager
def recorded(home: Path, models: list[Path]) -> Iterator[tuple[Served, list[list[Any]]]]:
    """A server whose engines record their calls (``Served.journal``) and embed inputs."""
    ctx = build_context(environ={"EDGEDESK_HOME": str(home)})
    settings = ServerSettings(max_tokens_limit=4).model_copy(update={"port": 0})
    journal: list[str] = []
    embedded: list[list[Any]] = []
    scheduler = Scheduler(
        lambda spec: RecordingEngine(load_engine(spec), journal, embedded),
        ctx.resolver,
        queue_max=settings.queue_max,
    )
    AppContext.scheduler.of(ctx).set(scheduler)
    key = ctx.key_store.create("tests")
    runner = ctx.new_api_server(settings=settings, model_paths=models)
    runner.start()
    try:
        yield Served(runner, ctx, ctx.key_store, key, scheduler, journal), embedded
    finally:
        runner.stop()
        ctx.close()


def post(served: Served, path: str, body: object | bytes, timeout: float = 60) -> httpx.Response:
    """POST ``body`` (raw bytes as given; else JSON with \\u escapes, lone surrogates kept)."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        served.root + path,
        content=content,
        headers={"Authorization": f"Bearer {served.key}", "Content-Type": "application/json"},
        timeout=timeout,
    )


def hostile_bodies(chat: str, embed: str) -> list[tuple[str, object | bytes, str]]:
    """(route, body, what the 400's message says) for every route that reads text or numbers."""
    hi = [{"role": "user", "content": "hi"}]
    bad = [{"role": "user", "content": f"a {SURROGATE} b"}]
    return [
        ("/v1/chat/completions", {"model": chat, "messages": bad}, "lone surrogate"),
        ("/v1/completions", {"model": chat, "prompt": SURROGATE}, "lone surrogate"),
        ("/v1/embeddings", {"model": embed, "input": [SURROGATE]}, "lone surrogate"),
        ("/v1/rerank", {"model": embed, "query": "q", "documents": [SURROGATE]}, "lone surrogate"),
        ("/v1/responses", {"model": chat, "input": SURROGATE}, "lone surrogate"),
        ("/v1/messages", {"model": chat, "max_tokens": 2, "messages": bad}, "lone surrogate"),
        ("/v1/messages/count_tokens", {"model": chat, "messages": bad}, "lone surrogate"),
        ("/api/chat", {"model": chat, "messages": bad}, "lone surrogate"),
        ("/api/generate", {"model": chat, "prompt": SURROGATE}, "lone surrogate"),
        ("/api/embed", {"model": embed, "input": SURROGATE}, "lone surrogate"),
        ("/api/embeddings", {"model": embed, "prompt": SURROGATE}, "lone surrogate"),
        ("/api/show", {"model": SURROGATE}, "lone surrogate"),
        ("/v1/chat/completions", {"model": chat, "messages": hi, "seed": 10**20}, "out of range"),
        ("/v1/chat/completions", {"model": chat, "messages": hi, "seed": 1e20}, "seed"),
        ("/v1/completions", {"model": chat, "prompt": [10**30]}, "out of range"),
        ("/v1/embeddings", {"model": embed, "input": [1e20]}, "'input.0': Unable to parse"),
        ("/v1/embeddings", {"model": embed, "input": [1.5]}, "fractional part"),
        ("/v1/embeddings", {"model": embed, "input": [[10**20]]}, "out of range"),
        ("/api/chat", {"model": chat, "messages": hi, "options": {"seed": 1e20}}, "out of range"),
        ("/api/generate", {"model": chat, "prompt": "x", "options": {"top_k": 1e20}}, "range"),
        ("/v1/messages", b'{"model": "m", "max_tokens": NaN, "messages": []}', "NaN"),
        ("/v1/responses", b'{"model": "m", "input": "x", "temperature": 1e999}', "out of range"),
        ("/api/chat", b'{"model": "\xed\xa0\x80", "messages": []}', "not UTF-8"),
    ]


def test_hostile_bodies_are_400s_before_any_model_is_used(
    tmp_path: Path, tiny_chat: Path, tiny_embed: Path
) -> None:
    with recorded(tmp_path, [tiny_chat, tiny_embed]) as (served, _):
        for path, body, says in hostile_bodies("tiny-chat", "tiny-embed"):
            response = post(served, path, body)
            assert response.status_code == 400, (path, body, response.text)
            assert_error_shape(path, response.json())
            assert says in response.text, (path, response.text)
        # /mcp (JSON-RPC, the MCP SDK's own strict parser): a parse error, never a 5xx.
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "search_documents", "arguments": {"query": SURROGATE}}
        response = httpx.post(
            served.root + "/mcp",
            content=json.dumps(call).encode(),
            headers={
                "Authorization": f"Bearer {served.key}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            timeout=60,
        )
        assert response.status_code == 400 and response.json()["error"]["code"] == -32700
        # No request reached an engine: none held a slot or loaded a model.
        assert not ENGINE_CALLS & set(served.journal), served.journal


def test_a_normal_request_is_not_delayed_behind_hostile_ones(
    tmp_path: Path, tiny_chat: Path, tiny_embed: Path
) -> None:
    # One slot, held by a slowed stream: a hostile request that took a slot (or waited
    # for one) could only be answered after the stream's last chunk.
    with serve(tmp_path, [tiny_chat], delay_s=0.05, parallel=1, max_tokens_limit=40) as served:
        hi = [{"role": "user", "content": "hi"}]
        streamed: list[httpx.Response] = []

        def stream() -> None:
            body = {"model": "tiny-chat", "messages": hi, "max_tokens": 40, "stream": True}
            streamed.append(post(served, "/v1/chat/completions", body, timeout=120))
            served.journal.append("stream done")

        streaming = threading.Thread(target=stream)
        streaming.start()
        wait_until(lambda: "chunk" in served.journal, 60, "the stream holds the slot")
        hostile = [
            b for b in hostile_bodies("tiny-chat", "tiny-embed") if "chat" in b[0] or "api" in b[0]
        ]
        answers: list[int] = []

        def attack(path: str, body: object | bytes) -> Callable[[], None]:
            def run() -> None:
                answers.append(post(served, path, body).status_code)
                served.journal.append("refused")

            return run

        attackers = [threading.Thread(target=attack(p, b)) for p, b, _ in hostile[:8]]
        for t in attackers:
            t.start()
        for t in attackers:
            t.join(60)
        streaming.join(120)
        assert answers == [400] * len(attackers)
        assert streamed and streamed[0].status_code == 200
        journal = served.journal
        assert journal.count("refused") == len(attackers)
        # Every hostile request was answered while the stream still produced chunks.
        last_refused = max(i for i, e in enumerate(journal) if e == "refused")
        last_chunk = max(i for i, e in enumerate(journal) if e == "chunk")
        assert last_refused < last_chunk, journal
        # And a normal request after them is served.
        again = post(served, "/v1/chat/completions", {"model": "tiny-chat", "messages": hi})
        assert again.status_code == 200


def test_prompts_far_over_the_context_are_refused_and_a_normal_one_served(
    tmp_path: Path, tiny_chat: Path
) -> None:
    huge = "lorem ipsum dolor sit amet\n" * 150_000  # 4 MB
    with serve(tmp_path, [tiny_chat], parallel=1, max_tokens_limit=4) as served:
        results: dict[str, httpx.Response] = {}

        def send(name: str, path: str, body: dict[str, Any]) -> None:
            results[name] = post(served, path, body, timeout=120)

        threads = [
            threading.Thread(
                target=send,
                args=(f"huge{n}", path, body),
            )
            for n, (path, body) in enumerate(
                [
                    (
                        "/v1/chat/completions",
                        {"model": "tiny-chat", "messages": [{"role": "user", "content": huge}]},
                    ),
                    ("/v1/completions", {"model": "tiny-chat", "prompt": huge}),
                    ("/api/generate", {"model": "tiny-chat", "prompt": huge, "stream": False}),
                    (
                        "/v1/messages",
                        {
                            "model": "tiny-chat",
                            "max_tokens": 2,
                            "messages": [{"role": "user", "content": huge}],
                        },
                    ),
                ]
                * 2
            )
        ]
        threads.append(
            threading.Thread(
                target=send,
                args=(
                    "normal",
                    "/v1/chat/completions",
                    {"model": "tiny-chat", "messages": [{"role": "user", "content": "hi"}]},
                ),
            )
        )
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert results["normal"].status_code == 200
        for name, response in results.items():
            if name != "normal":
                assert response.status_code == 400, response.text
                assert "counting stopped after" in response.text
        # Token ids are counted as ids: 300000 of them are refused without being
        # turned into text (the message gives their exact number).
        ids = post(served, "/v1/completions", {"model": "tiny-chat", "prompt": [5] * 300_000})
        assert ids.status_code == 400
        assert "the prompt is 300000 tokens" in ids.text


def test_far_over_context_prompts_are_refused_before_a_slot(
    tmp_path: Path, tiny_chat: Path
) -> None:
    huge = "lorem ipsum dolor sit amet\n" * 150_000  # 4 MB
    turn = [{"role": "user", "content": huge}]
    with recorded(tmp_path, [tiny_chat]) as (served, _):
        for path, body in [
            ("/v1/chat/completions", {"model": "tiny-chat", "messages": turn}),
            ("/v1/completions", {"model": "tiny-chat", "prompt": huge}),
            ("/v1/responses", {"model": "tiny-chat", "input": huge}),
            ("/v1/messages", {"model": "tiny-chat", "max_tokens": 2, "messages": turn}),
            ("/api/chat", {"model": "tiny-chat", "messages": turn, "stream": False}),
            ("/api/generate", {"model": "tiny-chat", "prompt": huge, "stream": False}),
            ("/api/generate", {"model": "tiny-chat", "prompt": huge, "raw": True}),
        ]:
            response = post(served, path, body)
            assert response.status_code == 400, (path, response.text)
            assert "counting stopped after" in response.text, path
        # Counted with the tokenizer (no slot), never streamed: no slot was taken.
        assert "tokenize" in served.journal
        assert not {"stream_chat", "stream_completion"} & set(served.journal), served.journal


def test_embeddings_count_ids_as_ids_and_embed_repeats_once(
    tmp_path: Path, tiny_embed: Path
) -> None:
    with recorded(tmp_path, [tiny_embed]) as (served, embedded):
        ids = [[5, 6, 7]] * 3
        answer = post(served, "/v1/embeddings", {"model": "tiny-embed", "input": ids})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["usage"]["prompt_tokens"] == 9  # the ids as sent, not retokenized text
        assert embedded == [[[5, 6, 7]]]  # once, as ids
        vectors = [d["embedding"] for d in body["data"]]
        assert [d["index"] for d in body["data"]] == [0, 1, 2]
        assert vectors[0] == vectors[1] == vectors[2]

        texts = ["alpha beta", "gamma", "alpha beta"] * 680
        answer = post(served, "/v1/embeddings", {"model": "tiny-embed", "input": texts})
        assert answer.status_code == 200, answer.text
        assert embedded[-1] == ["alpha beta", "gamma"]  # 2040 inputs, two embedded
        data = answer.json()["data"]
        assert [d["index"] for d in data] == list(range(len(texts)))
        assert data[0]["embedding"] == data[2]["embedding"] == data[2037]["embedding"]
        assert data[0]["embedding"] != data[1]["embedding"]

        out_of_vocabulary = post(
            served, "/v1/embeddings", {"model": "tiny-embed", "input": [[1, 999_999]]}
        )
        assert out_of_vocabulary.status_code == 400
        assert "outside the model's vocabulary" in out_of_vocabulary.text


def test_an_embeddings_request_over_its_token_limit_stops_counting_there(
    tmp_path: Path, tiny_embed: Path
) -> None:
    inputs = [f"{n} " + "a " * 8000 for n in range(60)]  # ~8000 tokens each, 480k in all
    with recorded(tmp_path, [tiny_embed]) as (served, embedded):
        refused = post(served, "/v1/embeddings", {"model": "tiny-embed", "input": inputs})
        assert refused.status_code == 400
        assert "or more in all; one request may hold at most 300000" in refused.text
        # Counted up to the limit (38 inputs), not all 60; nothing embedded.
        assert served.journal.count("tokenize") <= 38
        assert not embedded
