"""A model's worker stops answering mid-stream (SIGSTOP: what a driver hang, a deadlock
or paging without end look like from outside): through the real server, its stream ends
with the protocol's error, its other requests too, the next request gets a fresh worker,
and meanwhile every request that does not use it (the other model's embeddings,
``/health``, another chat's context header) answers as if nothing happened.

And in normal operation a response asks no worker for its counters: the context header
and ``/health`` read the scheduler's snapshot.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import psutil
import pytest

from desktop.engine._worker import start as worker_start
from desktop.engine._worker.client import WorkerEngine
from tests.conftest import scaled, wait_until
from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello world"}]
LONG = 4000  # tokens: far more than the stream lives before the stop
HUNG_AFTER_S = scaled(3.0)  # the watchdog's heartbeat deadline here (15 s in the app)
BOUND_S = 60.0  # far above it: a worker nobody watches keeps the stream open for ever
pytestmark = pytest.mark.skipif(os.name == "nt", reason="SIGSTOP is POSIX")


@pytest.fixture
def served(tmp_path: Path, tiny_chat: Path, tiny_embed: Path) -> Iterator[Served]:
    with pytest.MonkeyPatch.context() as patch:
        # Every worker the composition root starts gets this heartbeat deadline.
        patch.setattr(worker_start, "HUNG_AFTER_S", HUNG_AFTER_S)
        with serve(tmp_path, [tiny_chat, tiny_embed], require_key=False) as server:
            yield server


def _worker(server: Served, model: str) -> WorkerEngine:
    engine = server.scheduler.with_engine(model, lambda e: e)
    assert isinstance(engine, WorkerEngine)
    return engine


def _stopped(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_STOPPED
    except psutil.NoSuchProcess:
        return False


def test_a_hung_worker_ends_its_stream_and_delays_nobody_else(served: Served) -> None:
    with httpx.Client(base_url=served.root, timeout=BOUND_S) as http:
        assert http.post("/v1/embeddings", json={"model": "tiny-embed", "input": "hi"}).is_success
    hung = _worker(served, "tiny-chat")
    events: list[str] = []
    failures: list[openai.APIError] = []
    first_chunks = threading.Event()

    def stream() -> None:
        with openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=BOUND_S) as c:
            try:
                for n, _chunk in enumerate(
                    c.chat.completions.create(
                        model="tiny-chat",
                        messages=HI,  # type: ignore[arg-type]
                        max_tokens=LONG,
                        stream=True,
                    )
                ):
                    if n == 2:
                        first_chunks.set()
            except openai.APIError as exc:
                failures.append(exc)
        events.append("stream ended")

    streaming = threading.Thread(target=stream)
    streaming.start()
    try:
        assert first_chunks.wait(BOUND_S)
        os.kill(hung.pid, signal.SIGSTOP)
        wait_until(lambda: _stopped(hung.pid), BOUND_S, "the worker stopped")
        with httpx.Client(base_url=served.root, timeout=BOUND_S) as http:
            health = http.get("/health")
            events.append("health answered")
            embedded = http.post("/v1/embeddings", json={"model": "tiny-embed", "input": "hi"})
            events.append("embeddings answered")
            still_stopped = _stopped(hung.pid)
        streaming.join(BOUND_S)
        assert not streaming.is_alive(), "the stream still waits on the stopped worker"
    finally:
        if hung.alive:
            os.kill(hung.pid, signal.SIGKILL)  # never leave a stopped process behind
    # Both answered while the worker was stopped, before the watchdog ended the stream.
    assert still_stopped
    assert events == ["health answered", "embeddings answered", "stream ended"]
    assert health.status_code == 200 and "tiny-chat" in health.json()["loaded_models"]
    assert embedded.status_code == 200 and embedded.json()["data"][0]["embedding"]
    assert len(failures) == 1
    assert "stopped responding" in failures[0].message
    assert f"no answer in {HUNG_AFTER_S:g} s" in failures[0].message
    # The slot is free and the next request gets a fresh worker.
    assert served.scheduler.wait_until(lambda: not served.scheduler.busy, BOUND_S)
    with openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=BOUND_S) as c:
        reply = c.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=3)  # type: ignore[arg-type]
    assert reply.choices[0].message.content is not None
    assert _worker(served, "tiny-chat").pid != hung.pid


def test_a_response_asks_no_worker_for_its_counters(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    counters = WorkerEngine.stats

    def counted(self: WorkerEngine) -> object:
        asked.append(self.model_id)
        return counters(self)

    monkeypatch.setattr(WorkerEngine, "stats", counted)
    with httpx.Client(base_url=served.root, timeout=BOUND_S) as http:
        chat = http.post(
            "/v1/chat/completions",
            json={"model": "tiny-chat", "messages": HI, "max_tokens": 3},
        )
        embedded = http.post("/v1/embeddings", json={"model": "tiny-embed", "input": "hi"})
        health = http.get("/health")
        listed = http.get("/v1/models")
        assert [r.status_code for r in (chat, embedded, health, listed)] == [200] * 4
        assert chat.headers["x-edgedesk-context"]  # still said, from the snapshot
        assert asked == []
        # /metrics is where counters are asked for, now.
        assert http.get("/metrics").status_code == 200
    assert sorted(asked) == ["tiny-chat", "tiny-embed"]
