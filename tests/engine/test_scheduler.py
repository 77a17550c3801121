"""The scheduler: FIFO order, no cancel-on-arrival, queue limit, swaps, keep-alive."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop.engine.loader import load_engine
from desktop.engine.scheduler import Scheduler
from desktop.engine.types import Chunk, GenerationParams, LoadReport, Message, ModelSpec, Usage
from desktop.errors import Cancelled, ModelFileError, ModelLoadError, QueueFull

PARAMS = GenerationParams(max_tokens=8, temperature=0.0)


class FakeEngine:
    """Stands in for llama.cpp where the test is about ordering, not tokens."""

    def __init__(self, spec: ModelSpec, gate: threading.Event | None = None) -> None:
        self.spec = spec
        self.gate = gate
        self.closed = False
        self.report = LoadReport(spec.model_id, spec.path, 512, 0, False, 0.0, 0, "fake")

    def stream_chat(self, messages: Sequence[Message], params: GenerationParams,
                    cancel: threading.Event | None = None, tools: Any = None,
                    template_kwargs: Any = None) -> Iterator[Chunk]:
        yield Chunk(text=f"{self.spec.model_id}:{messages[-1].content}")
        if self.gate is not None:
            self.gate.wait(5)
        yield Chunk(finish_reason="stop", usage=Usage(1, 1))

    def stream_completion(self, prompt: str, params: GenerationParams,
                          cancel: threading.Event | None = None) -> Iterator[Chunk]:
        yield from self.stream_chat([Message("user", prompt)], params, cancel)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]

    def close(self) -> None:
        self.closed = True


def _resolver(sizes: dict[str, int] | None = None):
    def resolve(ref: str) -> ModelSpec:
        if ref == "missing":
            raise ModelFileError("model file not found: missing")
        return ModelSpec(Path(f"/{ref}.gguf"), ref,
                         options={"estimated_bytes": (sizes or {}).get(ref, 100)})
    return resolve


def _text(stream: Iterator[Chunk]) -> str:
    return "".join(c.text for c in stream)


def test_requests_run_in_arrival_order_and_never_cancel_each_other() -> None:
    gate = threading.Event()
    engines: dict[str, FakeEngine] = {}

    def load(spec: ModelSpec) -> FakeEngine:
        engines[spec.model_id] = FakeEngine(spec, gate)
        return engines[spec.model_id]

    scheduler = Scheduler(load, _resolver())
    results: list[str] = []
    first = scheduler.stream_chat("m", [Message("user", "1")], PARAMS)
    assert next(first).text == "m:1"  # request 1 is now mid-stream, holding the model

    def later(n: str) -> None:
        results.append(_text(scheduler.stream_chat("m", [Message("user", n)], PARAMS)))

    threads = []
    for n in ("2", "3"):
        threads.append(threading.Thread(target=later, args=(n,)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while scheduler.queue_depth < len(threads) and time.monotonic() < deadline:
            time.sleep(0.005)
    assert scheduler.queue_depth == 2 and scheduler.busy
    gate.set()
    rest = list(first)
    assert rest[-1].finish_reason == "stop"  # the running request finished normally
    for thread in threads:
        thread.join(5)
    assert results == ["m:2", "m:3"]
    assert scheduler.queue_depth == 0


def test_full_queue_is_refused_with_retry_hint() -> None:
    gate = threading.Event()
    scheduler = Scheduler(lambda s: FakeEngine(s, gate), _resolver(), queue_max=1)
    running = scheduler.stream_chat("m", [Message("user", "a")], PARAMS)
    next(running)
    waiter = threading.Thread(target=lambda: list(scheduler.stream_chat(
        "m", [Message("user", "b")], PARAMS)))
    waiter.start()
    while scheduler.queue_depth < 1:
        time.sleep(0.005)
    with pytest.raises(QueueFull) as refused:
        next(scheduler.stream_chat("m", [Message("user", "c")], PARAMS))
    assert refused.value.retry_after_s >= 1
    gate.set()
    list(running)
    waiter.join(5)


def test_a_request_cancelled_while_waiting_leaves_the_line_without_running() -> None:
    gate = threading.Event()
    prompts: list[str] = []

    class CountingEngine(FakeEngine):
        def stream_chat(self, messages: Sequence[Message], params: GenerationParams,
                        cancel: threading.Event | None = None,
                        tools: Any = None, template_kwargs: Any = None) -> Iterator[Chunk]:
            prompts.append(messages[-1].content)  # the prompt would be processed here
            yield from super().stream_chat(messages, params, cancel, tools)

    scheduler = Scheduler(lambda s: CountingEngine(s, gate), _resolver(), queue_max=2)
    running = scheduler.stream_chat("m", [Message("user", "typing")], PARAMS)
    next(running)
    abandoned = threading.Event()  # an IDE completion the user typed past
    outcome: list[object] = []

    def wait_then_give_up() -> None:
        try:
            outcome.append(_text(scheduler.stream_chat(
                "m", [Message("user", "stale")], PARAMS, abandoned)))
        except Cancelled as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait_then_give_up)
    waiter.start()
    while scheduler.queue_depth < 1:
        time.sleep(0.005)
    later = threading.Thread(target=lambda: outcome.append(_text(scheduler.stream_chat(
        "m", [Message("user", "fresh")], PARAMS))))
    later.start()
    while scheduler.queue_depth < 2:
        time.sleep(0.005)
    with pytest.raises(QueueFull):  # the line is full...
        next(scheduler.stream_chat("m", [Message("user", "x")], PARAMS))
    started = time.monotonic()
    abandoned.set()
    waiter.join(5)
    assert time.monotonic() - started < 1.0 and isinstance(outcome[0], Cancelled)
    assert scheduler.queue_depth == 1  # ...until the abandoned one left its place
    gate.set()
    list(running)
    later.join(5)
    assert outcome[1] == "m:fresh"
    assert prompts == ["typing", "fresh"]  # the abandoned prompt never reached the model


def test_models_swap_within_budget_least_recently_used_first() -> None:
    engines: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec))
        return engines[-1]

    scheduler = Scheduler(load, _resolver({"a": 60, "b": 30, "c": 50}), budget_bytes=100,
                          max_loaded=3)
    for model in ("a", "b"):
        _text(scheduler.stream_chat(model, [Message("user", "x")], PARAMS))
    assert [m.model_id for m in scheduler.loaded()] == ["b", "a"]
    _text(scheduler.stream_chat("c", [Message("user", "x")], PARAMS))  # 60+30+50 > 100
    assert sorted(m.model_id for m in scheduler.loaded()) == ["b", "c"]
    assert engines[0].closed and not engines[1].closed


def test_keep_alive_unloads_idle_models_only() -> None:
    now = [0.0]
    scheduler = Scheduler(lambda s: FakeEngine(s), _resolver(), keep_alive_s=600,
                          clock=lambda: now[0])
    scheduler.load("a")
    now[0] = 300.0
    scheduler.load("b")
    now[0] = 700.0
    assert scheduler.reap_idle() == ["a"]
    assert [m.model_id for m in scheduler.loaded()] == ["b"]


def test_failed_load_leaves_scheduler_usable() -> None:
    def load(spec: ModelSpec) -> FakeEngine:
        if spec.model_id == "broken":
            raise RuntimeError("bad magic")
        return FakeEngine(spec)

    scheduler = Scheduler(load, _resolver())
    with pytest.raises(ModelLoadError, match="could not load broken: bad magic"):
        list(scheduler.stream_chat("broken", [Message("user", "x")], PARAMS))
    with pytest.raises(ModelFileError):
        list(scheduler.stream_chat("missing", [Message("user", "x")], PARAMS))
    assert _text(scheduler.stream_chat("ok", [Message("user", "y")], PARAMS)) == "ok:y"
    assert not scheduler.busy


def test_real_engine_through_scheduler_serves_chat_and_embeddings(
        tiny_chat: Path, tiny_embed: Path) -> None:
    specs = {
        "chat": ModelSpec(tiny_chat, "chat", context_length=256),
        "embed": ModelSpec(tiny_embed, "embed", kind="embedding", context_length=128),
    }
    scheduler = Scheduler(load_engine, specs.__getitem__)
    chunks = list(scheduler.stream_chat("chat", [Message("user", "hello")], PARAMS))
    assert chunks[-1].usage.completion_tokens == 8
    assert chunks[-1].timings.load_s > 0  # the first request paid for the load
    again = list(scheduler.stream_chat("chat", [Message("user", "hello")], PARAMS))
    assert again[-1].timings.load_s == 0  # warm: no reload
    vectors = scheduler.embed("embed", ["a", "b"])
    assert len(vectors) == 2
    assert {m.model_id for m in scheduler.loaded()} == {"chat", "embed"}
    scheduler.close()
    assert scheduler.loaded() == []
