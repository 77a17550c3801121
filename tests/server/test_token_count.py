"""``/v1/messages/count_tokens`` on a long prompt: counted in pieces, so that a client
that leaves stops the count, and the pieces add up to what one call counts.

One tokenize call of a 1 MiB prompt could not be stopped: 2.5-9 s for prose on Gemma 3
270M on a busy 2-core machine, 46 s for code (indentation and blank lines).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types import MessageParam

from desktop.base.config import ServerSettings
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, Message
from desktop.root.context import build_context
from desktop.server._asgi import services_for
from desktop.server._metrics import AccessLog, AccessRecord
from desktop.server._model_directory import ResolverDirectory
from desktop.server._protocols.anthropic.routes import MAX_COUNT_CHARS
from desktop.server._runner import ServerRunner, key_store
from desktop.server._token_count import PIECE_CHARS, count_prompt_tokens, prompt_pieces
from tests.conftest import wait_until

COUNT = "/v1/messages/count_tokens"


def test_a_prompt_is_cut_only_where_tokenizers_do_not_join_text() -> None:
    short = "word " * (PIECE_CHARS // 5)
    assert prompt_pieces(short) == [short]  # counted in one call: exact
    prose = "\n".join(f"line {n} of the conversation" for n in range(60_000))
    lines = prompt_pieces(prose)
    assert "".join(lines) == prose and len(lines) > 10
    assert all(PIECE_CHARS <= len(p) <= 2 * PIECE_CHARS for p in lines[:-1])
    assert all(p.endswith("\n") for p in lines[:-1])  # each cut after a line break
    one_line = "zebra " * 200_000
    words = prompt_pieces(one_line)
    assert "".join(words) == one_line and all(p.startswith(" zebra") for p in words[1:])
    cjk = "这是一个测试句子，用于计算令牌数量。" * 10_000
    clauses = prompt_pieces(cjk)
    assert "".join(clauses) == cjk and all(p[-1] in "，。" for p in clauses[:-1])
    blob = "x" * (3 * PIECE_CHARS)
    assert [len(p) for p in prompt_pieces(blob)] == [PIECE_CHARS] * 3  # nowhere better


@pytest.mark.slow
def test_the_pieces_add_up_to_one_calls_count_on_gemma(gemma_path: Path, tmp_path: Path) -> None:
    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path / "home")})
    ctx.resolver.register(gemma_path)
    texts = {
        "prose": "\n".join(f"Paragraph {n}: the zebra met a café owner." for n in range(6_000)),
        "code": "def f(x):\n    return x + 1\n\n\n" * 6_000,
        "json": json.dumps([{"name": f"item{n}", "tags": ["a", "b"]} for n in range(8_000)]),
        "cjk": "这是一个测试句子，用于计算令牌数量。" * 12_000,
        "short": "Hello there, how many tokens is this?",
    }

    def counts(engine: Any) -> dict[str, tuple[int, int]]:
        found = {}
        for name, text in texts.items():
            prompt = engine.render(ChatCall.of([Message(role="user", content=text)]))
            assert len(prompt_pieces(prompt)) >= (3 if name != "short" else 1)
            found[name] = (len(engine.prompt_tokens(prompt)), count_prompt_tokens(engine, prompt))
        return found

    try:
        found = ctx.scheduler.with_engine(gemma_path.stem, counts)
    finally:
        ctx.close()
    assert {name: whole for name, (whole, _) in found.items()} == {
        name: pieces for name, (_, pieces) in found.items()
    }


class NotedTokenizer:
    """The real engine; once ``armed``, notes each tokenize call, holding the first one
    until the test's client has left (so the count is surely in progress then)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.armed = threading.Event()
        self.tokenizing = threading.Event()
        self.left = threading.Event()
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def _note(self) -> None:
        if self.armed.is_set():
            self.calls += 1
            self.tokenizing.set()
            assert self.left.wait(60), "the test's client never left"

    def prompt_tokens(self, prompt: str) -> list[int]:
        self._note()
        tokens: list[int] = self.engine.prompt_tokens(prompt)
        return tokens

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        self._note()
        tokens: list[int] = self.engine.tokenize(text, add_bos=add_bos, special=special)
        return tokens


def test_count_tokens_stops_when_its_client_leaves(tmp_path: Path, tiny_chat: Path) -> None:
    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path / "home")})
    ctx.resolver.register(tiny_chat)
    engines: list[NotedTokenizer] = []

    def load(spec: Any) -> Any:
        engines.append(NotedTokenizer(load_engine(spec)))
        return engines[-1]

    scheduler = Scheduler(load, ctx.resolver)
    keys = key_store(ctx.paths.data_dir)
    key = keys.create("tests")
    records: list[AccessRecord] = []
    log = AccessLog(None)
    log.subscribe(records.append)
    runner = ServerRunner(
        services_for(
            scheduler,
            ResolverDirectory(ctx.resolver),
            ServerSettings().model_copy(update={"port": 0}),
            keys,
            access_log=log,
        )
    )
    runner.start()
    try:
        root = runner.url.removesuffix("/v1")
        hi: list[MessageParam] = [{"role": "user", "content": "hello world"}]
        with anthropic.Anthropic(base_url=root, api_key=key, max_retries=0, timeout=60) as c:
            small = c.messages.count_tokens(model="tiny-chat", messages=hi).input_tokens
        [engine] = engines
        hello = ChatCall.of([Message("user", "hello world")])
        assert small == len(engine.prompt_tokens(engine.render(hello)))
        # Near the limit: ~16 pieces to tokenize.
        text = "\n".join(["the cat and the dog " * 50] * (MAX_COUNT_CHARS // 1001 - 1))
        body = json.dumps({"model": "tiny-chat", "messages": [{"role": "user", "content": text}]})
        payload = body.encode()
        host, port = root.removeprefix("http://").split(":")
        engine.armed.set()
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                f"POST {COUNT} HTTP/1.1\r\nHost: {host}:{port}\r\nx-api-key: {key}\r\n"
                "anthropic-version: 2023-06-01\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
            assert engine.tokenizing.wait(60), "the count never started"
        left = time.perf_counter()
        engine.left.set()

        def ended() -> list[AccessRecord]:
            counts = [r for r in records if r.route == COUNT]
            return counts if len(counts) == 2 else []

        [_, record] = wait_until(ended, timeout=60, what="the count_tokens request ended")
        stopped = time.perf_counter() - left
        assert record.error_code == "cancelled"  # (logged as a 400: clients know no 499)
        assert engine.calls <= 2, f"{engine.calls} pieces tokenized, most after the client left"
        assert stopped < 2.0, f"it counted {stopped:.2f} s for nobody"
    finally:
        runner.stop()
        scheduler.close()
        ctx.close()
