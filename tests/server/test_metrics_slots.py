"""/metrics shows slots busy/total, the queue, prompt tokens cached vs processed, batching."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, EngineStats, GenerationParams, Message, ModelSpec
from desktop.server._metrics import Metrics, gauges_from
from tests.engine.test_scheduler import WAIT_S, FakeEngine
from tests.server.conftest import Served

STATS = EngineStats(
    slots_total=2,
    slots_busy=2,
    prompt_tokens_processed=1200,
    prompt_tokens_cached=3400,
    decode_steps=50,
    tokens_decoded=150,
    embed_decodes=7,
)


class _CountedEngine(FakeEngine):
    def stats(self) -> EngineStats:
        return STATS


def _finish(gate: threading.Event, held: list[Any]) -> None:
    gate.set()
    *streams, waiter = held
    for stream in streams:
        list(stream)
    waiter.join(WAIT_S)


def _busy_scheduler() -> tuple[Scheduler, threading.Event, list[Any]]:
    """Two slots streaming and one request waiting for a slot."""
    gate = threading.Event()
    scheduler = Scheduler(
        lambda s: _CountedEngine(s, gate, parallel=2),
        lambda ref: ModelSpec(Path(f"/{ref}.gguf"), ref),
    )
    params = GenerationParams(max_tokens=4)
    streams = [scheduler.stream_chat("m", ChatCall.of([Message("user", n)], params)) for n in "ab"]
    for stream in streams:
        next(stream)
    waiter = threading.Thread(
        target=lambda: list(
            scheduler.stream_chat("m", ChatCall.of([Message("user", "c")], params))
        ),
        daemon=True,
    )
    waiter.start()
    assert scheduler.wait_until(lambda: scheduler.queue_depth == 1, WAIT_S)
    return scheduler, gate, [*streams, waiter]


def test_prometheus_text_shows_slots_queue_cache_and_batching() -> None:
    scheduler, gate, held = _busy_scheduler()
    text = Metrics().render(gauges_from(scheduler))
    _finish(gate, held)
    assert "edgedesk_queue_depth 1" in text
    assert 'edgedesk_slots_busy{model="m"} 2' in text
    assert 'edgedesk_slots_total{model="m"} 2' in text
    assert 'edgedesk_prompt_tokens_total{model="m",source="cached"} 3400' in text
    assert 'edgedesk_prompt_tokens_total{model="m",source="processed"} 1200' in text
    assert 'edgedesk_tokens_per_decode_step{model="m"} 3.0' in text
    assert 'edgedesk_embed_decodes_total{model="m"} 7' in text


def test_json_snapshot_has_the_same_figures() -> None:
    scheduler, gate, held = _busy_scheduler()
    data = Metrics().snapshot(gauges_from(scheduler))
    _finish(gate, held)
    assert data["queue_depth"] == 1 and data["busy"] is True
    [model] = data["models"]
    assert model == {
        "model": "m",
        "slots_busy": 2,
        "slots_total": 2,
        "prompt_tokens_cached": 3400,
        "prompt_tokens_processed": 1200,
        "decode_steps": 50,
        "tokens_decoded": 150,
        "tokens_per_decode_step": 3.0,
        "embed_decodes": 7,
    }


def test_metrics_json_over_http(server: Served, client) -> None:
    client.chat.completions.create(
        model="tiny-chat", messages=[{"role": "user", "content": "hi"}], max_tokens=2
    )
    auth = {"Authorization": f"Bearer {server.key}"}
    data = httpx.get(f"{server.root}/metrics?format=json", headers=auth).json()
    chat = next(m for m in data["models"] if m["model"] == "tiny-chat")
    assert chat["slots_total"] >= 1 and chat["slots_busy"] == 0
    assert any(r["route"] == "/v1/chat/completions" for r in data["requests"])
    bad = httpx.get(f"{server.root}/metrics?format=xml", headers=auth)
    assert bad.status_code == 400 and "format" in bad.text
