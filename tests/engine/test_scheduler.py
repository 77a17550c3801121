"""The scheduler: slots per model, FIFO line, queue limit, swaps, keep-alive without races."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from desktop.base.errors import (
    Cancelled,
    EdgeDeskError,
    ModelFileError,
    ModelLoadError,
    QueueFull,
)
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    GenerationParams,
    LoadReport,
    LocalPlan,
    Message,
    ModelSpec,
    RemotePlan,
    Usage,
)
from tests.conftest import scaled

PARAMS = GenerationParams(max_tokens=8, temperature=0.0)
WAIT_S = scaled(30.0)  # bounds a failure only (a hang fails, never blocks): a busy CI runs late


class FakeEngine:
    """Stands in for llama.cpp where the test is about admission, not tokens.

    Each stream yields its first chunk, then waits for ``gate`` before finishing, so a
    test holds streams open as long as it likes.
    """

    def __init__(
        self, spec: ModelSpec, gate: threading.Event | None = None, parallel: int = 1
    ) -> None:
        self.spec = spec
        self.gate = gate
        self.parallel = parallel
        self.closed = False
        self.closed_while_in_use = False
        self.active = 0
        self.max_active = 0
        self.started: list[str] = []  # prompts in the order their streams began
        self._lock = threading.Condition()
        self.report = LoadReport(spec.model_id, spec.path, 512, 0, False, 0.0, 0, "fake")

    def stats(self) -> EngineStats:
        return EngineStats(slots_total=self.parallel, slots_busy=self.active)

    def _enter(self, prompt: str) -> None:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.started.append(prompt)
            self._lock.notify_all()

    def wait_started(self, n: int) -> bool:
        """Wait until ``n`` streams have begun."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.started) >= n, WAIT_S)

    def _leave(self) -> None:
        with self._lock:
            self.active -= 1

    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        messages = call.messages
        self._enter(messages[-1].content)
        try:
            yield Delta(text=f"{self.spec.model_id}:{messages[-1].content}")
            if self.gate is not None:
                assert self.gate.wait(WAIT_S)
            yield Delta(finish_reason="stop", usage=Usage(1, 1))
        finally:
            self._leave()

    def stream_completion(
        self, prompt: str, params: GenerationParams, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        yield from self.stream_chat(ChatCall.of([Message("user", prompt)], params), cancel)

    def embed(
        self, texts: Sequence[str], cancel: threading.Event | None = None
    ) -> list[list[float]]:
        return [[1.0] for _ in texts]

    def close(self) -> None:
        self.closed_while_in_use = self.closed_while_in_use or self.active > 0
        self.closed = True


def _resolver(sizes: dict[str, int] | None = None) -> Callable[[str], ModelSpec]:
    def resolve(ref: str) -> ModelSpec:
        if ref == "missing":
            raise ModelFileError("model file not found: missing")
        return ModelSpec(
            Path(f"/{ref}.gguf"), ref, plan=LocalPlan(estimated_bytes=(sizes or {}).get(ref, 100))
        )

    return resolve


def _text(stream: Iterator[Delta]) -> str:
    return "".join(c.text for c in stream)


def _background(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _ask(
    scheduler: Scheduler,
    model: str,
    text: str,
    results: list[str],
    cancel: threading.Event | None = None,
) -> threading.Thread:
    """Run one chat request on its own thread, appending its text (or the error)."""

    def run() -> None:
        try:
            results.append(
                _text(
                    scheduler.stream_chat(
                        model, ChatCall.of([Message("user", text)], PARAMS), cancel
                    )
                )
            )
        except (Cancelled, QueueFull) as exc:
            results.append(type(exc).__name__)

    return _background(run)


def _queued(scheduler: Scheduler, n: int) -> None:
    assert scheduler.wait_until(lambda: scheduler.queue_depth == n, WAIT_S)


def test_one_slot_serves_in_arrival_order_and_never_cancels_the_running_request() -> None:
    gate = threading.Event()
    engines: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec, gate))
        return engines[-1]

    scheduler = Scheduler(load, _resolver())
    results: list[str] = []
    first = scheduler.stream_chat("m", ChatCall.of([Message("user", "1")], PARAMS))
    assert next(first).text == "m:1"  # request 1 is now mid-stream, holding the slot
    threads = []
    for n in ("2", "3"):
        threads.append(_ask(scheduler, "m", n, results))
        _queued(scheduler, len(threads))  # so "2" is surely ahead of "3"
    assert scheduler.busy
    gate.set()
    rest = list(first)
    assert rest[-1].finish_reason == "stop"  # the running request finished normally
    for thread in threads:
        thread.join(WAIT_S)
    assert sorted(results) == ["m:2", "m:3"]
    assert engines[0].started == ["1", "2", "3"]
    assert scheduler.queue_depth == 0 and not scheduler.busy


def test_streams_run_side_by_side_up_to_the_engines_slots_then_queue() -> None:
    gate = threading.Event()
    engines: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec, gate, parallel=3))
        return engines[-1]

    scheduler = Scheduler(load, _resolver())
    running = [
        scheduler.stream_chat("m", ChatCall.of([Message("user", str(n))], PARAMS)) for n in range(3)
    ]
    assert [next(s).text for s in running] == ["m:0", "m:1", "m:2"]  # all three started
    [slots] = scheduler.loaded()
    assert (slots.slots_busy, slots.slots_total) == (3, 3)
    results: list[str] = []
    fourth = _ask(scheduler, "m", "3", results)
    _queued(scheduler, 1)  # every slot is busy: the fourth waits
    assert results == []
    running[1].close()  # a client went away: its slot is free at once
    _queued(scheduler, 0)
    assert engines[0].wait_started(4)
    assert engines[0].active == 3
    gate.set()
    fourth.join(WAIT_S)
    for stream in (running[0], running[2]):
        assert list(stream)[-1].finish_reason == "stop"
    assert results == ["m:3"]
    assert engines[0].max_active == 3 and len(engines) == 1


def test_full_slots_and_full_queue_are_refused_with_retry_hint() -> None:
    gate = threading.Event()
    scheduler = Scheduler(lambda s: FakeEngine(s, gate, parallel=2), _resolver(), queue_max=1)
    running = [scheduler.stream_chat("m", ChatCall.of([Message("user", n)], PARAMS)) for n in "ab"]
    for stream in running:
        next(stream)
    results: list[str] = []
    waiter = _ask(scheduler, "m", "c", results)
    _queued(scheduler, 1)
    with pytest.raises(QueueFull) as refused:
        next(scheduler.stream_chat("m", ChatCall.of([Message("user", "d")], PARAMS)))
    assert refused.value.retry_after_s >= 1
    gate.set()
    for stream in running:
        list(stream)
    waiter.join(WAIT_S)
    assert results == ["m:c"]


def test_a_request_cancelled_while_waiting_leaves_the_line_without_running() -> None:
    gate = threading.Event()
    prompts: list[str] = []

    class CountingEngine(FakeEngine):
        def stream_chat(
            self, call: ChatCall, cancel: threading.Event | None = None
        ) -> Iterator[Delta]:
            prompts.append(call.messages[-1].content)  # the prompt would be processed here
            yield from super().stream_chat(call, cancel)

    scheduler = Scheduler(lambda s: CountingEngine(s, gate), _resolver(), queue_max=2)
    running = scheduler.stream_chat("m", ChatCall.of([Message("user", "typing")], PARAMS))
    next(running)
    abandoned = threading.Event()  # an IDE completion the user typed past
    stale: list[str] = []
    fresh: list[str] = []
    waiter = _ask(scheduler, "m", "stale", stale, abandoned)
    _queued(scheduler, 1)
    later = _ask(scheduler, "m", "fresh", fresh)
    _queued(scheduler, 2)
    with pytest.raises(QueueFull):  # the line is full...
        next(scheduler.stream_chat("m", ChatCall.of([Message("user", "x")], PARAMS)))
    abandoned.set()
    waiter.join(WAIT_S)  # leaves while the running request still holds the slot
    assert stale == ["Cancelled"]
    assert scheduler.queue_depth == 1  # ...until the abandoned one left its place
    gate.set()
    list(running)
    later.join(WAIT_S)
    assert fresh == ["m:fresh"]
    assert prompts == ["typing", "fresh"]  # the abandoned prompt never reached the model


def test_embeddings_are_admitted_beside_busy_slots_and_each_other() -> None:
    gate = threading.Event()
    both_inside = threading.Barrier(2, timeout=WAIT_S)

    class MeetingEngine(FakeEngine):
        def embed(
            self, texts: Sequence[str], cancel: threading.Event | None = None
        ) -> list[list[float]]:
            both_inside.wait()  # breaks (and fails) unless both calls run at once
            return super().embed(texts, cancel)

    scheduler = Scheduler(lambda s: MeetingEngine(s, gate, parallel=2), _resolver())
    running = [scheduler.stream_chat("m", ChatCall.of([Message("user", n)], PARAMS)) for n in "ab"]
    for stream in running:
        next(stream)  # every slot streams
    vectors: list[list[list[float]]] = []
    clients = [_background(lambda: vectors.append(scheduler.embed("m", ["x"]))) for _ in "12"]
    for client in clients:
        client.join(WAIT_S)
    assert vectors == [[[1.0]], [[1.0]]] and scheduler.queue_depth == 0
    gate.set()
    for stream in running:
        list(stream)


def test_a_swap_waits_until_the_old_model_is_no_longer_used() -> None:
    gate = threading.Event()
    engines: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec, gate, parallel=2))
        return engines[-1]

    scheduler = Scheduler(load, _resolver(), max_loaded=1)
    running = scheduler.stream_chat("a", ChatCall.of([Message("user", "1")], PARAMS))
    next(running)
    swapped: list[str] = []
    swap = _ask(scheduler, "b", "2", swapped)
    _queued(scheduler, 1)
    # A free slot on "a" does not let a later request overtake the one waiting for "b".
    later: list[str] = []
    after = _ask(scheduler, "a", "3", later)
    _queued(scheduler, 2)
    assert [e.spec.model_id for e in engines] == ["a"] and not engines[0].closed
    gate.set()
    assert list(running)[-1].finish_reason == "stop"
    swap.join(WAIT_S)
    after.join(WAIT_S)
    assert (swapped, later) == (["b:2"], ["a:3"])
    assert [e.spec.model_id for e in engines] == ["a", "b", "a"]  # b ran before a's return
    assert not any(e.closed_while_in_use for e in engines)


def test_keep_alive_never_closes_an_engine_a_request_is_using() -> None:
    """The reaper decides, a request takes the engine, then the reaper closes: never."""
    now = [0.0]
    between: list[Callable[[], None]] = []  # runs inside the reaper's read of the clock

    def clock() -> float:
        while between:
            between.pop()()
        return now[0]

    gate = threading.Event()
    engines: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec, gate))
        return engines[-1]

    scheduler = Scheduler(load, _resolver(), keep_alive_s=600, clock=clock)
    scheduler.load("m")
    now[0] = 700.0  # idle past keep-alive
    streaming = threading.Event()
    chunks: list[Delta] = []

    def request() -> None:
        stream = scheduler.stream_chat("m", ChatCall.of([Message("user", "hi")], PARAMS))
        chunks.append(next(stream))
        streaming.set()
        chunks.extend(stream)

    worker = threading.Thread(target=request, daemon=True)

    def let_a_request_in() -> None:
        worker.start()
        assert streaming.wait(WAIT_S)

    between.append(let_a_request_in)
    reaped = scheduler.reap_idle()
    gate.set()
    worker.join(WAIT_S)
    assert not engines[0].closed_while_in_use  # in llama.cpp: a use-after-free
    assert reaped == [] and chunks[-1].finish_reason == "stop"
    now[0] = 2000.0
    assert scheduler.reap_idle() == ["m"] and engines[0].closed


def test_models_swap_within_budget_least_recently_used_first() -> None:
    engines: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec))
        return engines[-1]

    scheduler = Scheduler(
        load, _resolver({"a": 60, "b": 30, "c": 50}), budget_bytes=100, max_loaded=3
    )
    for model in ("a", "b"):
        _text(scheduler.stream_chat(model, ChatCall.of([Message("user", "x")], PARAMS)))
    assert [m.model_id for m in scheduler.loaded()] == ["b", "a"]
    _text(scheduler.stream_chat("c", ChatCall.of([Message("user", "x")], PARAMS)))  # 60+30+50 > 100
    assert sorted(m.model_id for m in scheduler.loaded()) == ["b", "c"]
    assert engines[0].closed and not engines[1].closed


def test_keep_alive_unloads_idle_models_only() -> None:
    now = [0.0]
    scheduler = Scheduler(
        lambda s: FakeEngine(s), _resolver(), keep_alive_s=600, clock=lambda: now[0]
    )
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
        list(scheduler.stream_chat("broken", ChatCall.of([Message("user", "x")], PARAMS)))
    with pytest.raises(ModelFileError):
        list(scheduler.stream_chat("missing", ChatCall.of([Message("user", "x")], PARAMS)))
    assert _text(scheduler.stream_chat("ok", ChatCall.of([Message("user", "y")], PARAMS))) == "ok:y"
    assert not scheduler.busy and [m.model_id for m in scheduler.loaded()] == ["ok"]


def test_a_shutdown_during_a_load_closes_the_engine_that_load_makes() -> None:
    # `serve` preloads its models on a thread; Ctrl+C may come while one loads.
    loading, finish = threading.Event(), threading.Event()
    made: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        loading.set()
        finish.wait(WAIT_S)
        made.append(FakeEngine(spec))
        return made[-1]

    scheduler = Scheduler(load, _resolver())
    errors: list[BaseException] = []

    def preload() -> None:
        try:
            scheduler.load("big")
        except EdgeDeskError as exc:
            errors.append(exc)

    thread = _background(preload)
    assert loading.wait(WAIT_S)
    scheduler.close()
    finish.set()
    thread.join(WAIT_S)
    assert made and made[0].closed  # no worker left running after the app has gone
    assert errors and "unloaded while it loaded" in str(errors[0])
    assert scheduler.loaded() == [] and not scheduler.busy


def test_real_engine_through_scheduler_serves_chat_and_embeddings(
    tiny_chat: Path, tiny_embed: Path
) -> None:
    specs = {
        "chat": ModelSpec(tiny_chat, "chat", context_length=256),
        "embed": ModelSpec(tiny_embed, "embed", kind="embedding", context_length=128),
    }
    scheduler = Scheduler(load_engine, specs.__getitem__)
    chunks = list(scheduler.stream_chat("chat", ChatCall.of([Message("user", "hello")], PARAMS)))
    usage, timings = chunks[-1].usage, chunks[-1].timings
    assert usage is not None and usage.completion_tokens == 8
    assert timings is not None and timings.load_s > 0  # the first request paid for the load
    again = list(scheduler.stream_chat("chat", ChatCall.of([Message("user", "hello")], PARAMS)))
    assert again[-1].timings is not None and again[-1].timings.load_s == 0  # warm: no reload
    vectors = scheduler.embed("embed", ["a", "b"])
    assert len(vectors) == 2
    assert {m.model_id for m in scheduler.loaded()} == {"chat", "embed"}
    scheduler.close()
    assert scheduler.loaded() == []


def _remote_or_local(parallel: dict[str, int]) -> Callable[[str], ModelSpec]:
    """Local models ``a``/``b`` (slots from ``parallel``, read at each resolve) and a remote."""

    def resolve(ref: str) -> ModelSpec:
        if ref.startswith("gpu/"):
            return ModelSpec(None, ref, plan=RemotePlan("gpu", "http://gpu", ref[4:]))
        return ModelSpec(
            Path(f"/{ref}.gguf"),
            ref,
            plan=LocalPlan(estimated_bytes=100, parallel=parallel.get(ref, 1)),
        )

    return resolve


def test_remote_models_do_not_count_toward_max_loaded() -> None:
    engines: dict[str, list[FakeEngine]] = {}

    def load(spec: ModelSpec) -> FakeEngine:
        engines.setdefault(spec.model_id, []).append(FakeEngine(spec))
        return engines[spec.model_id][-1]

    scheduler = Scheduler(load, _remote_or_local({}), budget_bytes=100, max_loaded=1)
    assert _text(scheduler.stream_chat("a", ChatCall.of([Message("user", "x")], PARAMS))) == "a:x"
    for model in ("gpu/big", "gpu/other"):  # remote models: no memory used here
        _text(scheduler.stream_chat(model, ChatCall.of([Message("user", "x")], PARAMS)))
    assert _text(scheduler.stream_chat("a", ChatCall.of([Message("user", "y")], PARAMS))) == "a:y"
    assert len(engines["a"]) == 1 and not engines["a"][0].closed  # never evicted
    assert {m.model_id for m in scheduler.loaded()} == {"a", "gpu/big", "gpu/other"}
    _text(
        scheduler.stream_chat("b", ChatCall.of([Message("user", "x")], PARAMS))
    )  # a local one still swaps
    assert engines["a"][0].closed
    assert {m.model_id for m in scheduler.loaded()} == {"b", "gpu/big", "gpu/other"}


def test_a_changed_load_option_reloads_the_model_at_its_next_request() -> None:
    engines: list[FakeEngine] = []
    parallel = {"a": 1}

    def load(spec: ModelSpec) -> FakeEngine:
        engines.append(FakeEngine(spec, parallel=spec.local.parallel if spec.local else 1))
        return engines[-1]

    scheduler = Scheduler(load, _remote_or_local(parallel))
    _text(scheduler.stream_chat("a", ChatCall.of([Message("user", "x")], PARAMS)))
    _text(scheduler.stream_chat("a", ChatCall.of([Message("user", "x")], PARAMS)))
    assert len(engines) == 1  # same plan: kept
    parallel["a"] = 3  # as engine.parallel changes in the settings
    _text(scheduler.stream_chat("a", ChatCall.of([Message("user", "x")], PARAMS)))
    assert len(engines) == 2 and engines[0].closed
    assert [m.slots_total for m in scheduler.loaded()] == [3]


def test_loads_swaps_and_keep_alive_each_write_one_debug_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mib = 1024 * 1024
    now = [0.0]
    scheduler = Scheduler(
        lambda s: FakeEngine(s, parallel=2),
        _resolver({"a": 60 * mib, "b": 50 * mib}),
        budget_bytes=100 * mib,
        keep_alive_s=600,
        clock=lambda: now[0],
    )
    secret = "the words of the prompt"
    with caplog.at_level(logging.DEBUG, logger="edgedesk.engine"):
        _text(scheduler.stream_chat("a", ChatCall.of([Message("user", secret)], PARAMS)))
        now[0] = 10.0
        scheduler.load("b")  # 60 + 50 MiB > 100: a goes
        now[0] = 700.0
        assert scheduler.reap_idle() == ["b"]
    lines = [r.getMessage() for r in caplog.records if r.name == "edgedesk.engine"]
    expected = [
        r"load a: estimated 60 MiB",
        r"load a: ready in \d+\.\d\d s, 2 slots",
        r"unload a: swapped out for b \(least recently used\)",
        r"load b: estimated 50 MiB",
        r"load b: ready in \d+\.\d\d s, 2 slots",
        r"unload b: idle 690 s \(keep-alive 600 s\)",
    ]
    assert len(lines) == len(expected), lines
    for line, pattern in zip(lines, expected, strict=True):
        assert re.fullmatch(pattern, line), line
    assert all(secret not in line for line in lines)
