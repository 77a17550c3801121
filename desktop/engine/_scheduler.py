"""Admission in front of llama.cpp, shared by the chat window and the HTTP server.

Each loaded model admits up to ``engine.parallel`` generation streams at once (the slot
engine decodes them together); embedding, rerank and tokenizer work is admitted beside
them, since the engine merges such calls itself (on a one-slot engine it takes the slot,
so an engine that is not thread-safe is never used by two threads). Requests that cannot
start wait in one bounded line in arrival order: a later request never overtakes an
earlier one for the same model, a new request never cancels one in progress, and a full
line refuses with QueueFull. A request cancelled while it waits leaves at once.

Models are loaded on demand through a swappable ``load`` function, swapped least recently
used first within a memory budget and ``max_loaded`` (remote models hold no memory here
and count toward neither), reloaded at their next request when their plan changed (any
spec field or load option, such as ``engine.parallel``), and unloaded after
``keep_alive_s`` idle seconds by ``reap_idle()``, which the UI and the server runner call
on their own timers (the core starts no threads). Every use of an engine is counted per
model under the one lock, and a model is closed (swap, keep-alive, unload) only while its
count is 0: closing an engine a request still uses would be a use-after-free inside
llama.cpp.

Threads: every public method may be called from any thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from desktop.base.defaults import KEEP_ALIVE_S, MAX_LOADED_MODELS, QUEUE_MAX
from desktop.base.errors import (
    Cancelled,
    EdgeDeskError,
    EngineCrashed,
    ModelBroken,
    ModelLoadError,
    QueueFull,
)
from desktop.engine._broken import BrokenFile
from desktop.engine._protocol import Engine, LoadedModel
from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    GenerationParams,
    LoadReport,
    ModelSpec,
)

# How often a waiting request looks at its cancel event (a condition has no other wake-up).
CANCEL_POLL_S = 0.05
RETRY_AFTER_S = 2
# One debug line per load, swap, reload, keep-alive unload and unload (as Ollama's
# scheduler logs): model ids and numbers only, never a request's content.
log = logging.getLogger("edgedesk.engine")


LoadFn = Callable[[ModelSpec], Engine]
T = TypeVar("T")
# (ref) -> spec; (ref, context_length=N, cpu_moe=...) with those a request asks for
ResolveFn = Callable[..., ModelSpec]


CRASHES_TO_BROKEN = 3  # loads in a row that crash their worker before a model is "broken"


def is_local(spec: ModelSpec) -> bool:
    """Whether ``spec`` loads into this machine's memory (a remote model's does not)."""
    return spec.local is not None


def engine_alive(engine: Engine | None) -> bool:
    """False for an engine whose worker process has ended (an engine without a worker,
    in this process or remote, is alive while it is loaded; None: still loading)."""
    return engine is None or bool(getattr(engine, "alive", True))


class BrokenModels(Protocol):
    """Where crashed loads are counted and broken models remembered (across processes)."""

    def reason(self, model_id: str) -> str | None:
        """Why ``model_id`` is marked broken, or None when it may load."""
        ...

    def crashed(self, model_id: str, reason: str, *, threshold: int) -> int:
        """Count a crashed load (broken at ``threshold`` in a row); the count so far."""
        ...

    def loaded(self, model_id: str) -> None:
        """A load worked: forget its crashes."""
        ...

    def clear(self, model_id: str) -> bool:
        """Try ``model_id`` again at its next request; True if it was marked broken."""
        ...


@dataclass
class _Model:
    """One model in memory (or being loaded: ``engine`` is None until the load returns)."""

    spec: ModelSpec
    engine: Engine | None
    last_used: float
    parallel: int = 1
    streams: int = 0  # slots taken by admitted requests
    in_use: int = 0  # every admitted request, streams or not; > 0 forbids close()
    requests: int = 0
    peak_streams: int = 0  # most slots busy at once since load


@dataclass(eq=False)
class _Ticket:
    """A request's place in the line."""

    model_id: str
    stream: bool
    slots: int = 0  # slots it took once admitted
    loads: bool = False  # admitted as the one that loads the model
    swap: bool = False  # waits for busy models to drain so this one fits


@dataclass(frozen=True)
class _Lease:
    engine: Engine
    waited_s: float
    load_s: float


class Scheduler:
    """Admits work per model up to its slots; loads, swaps and unloads models on demand."""

    def __init__(
        self,
        load: LoadFn,
        resolve: ResolveFn,
        *,
        budget_bytes: int | None = None,
        max_loaded: int = MAX_LOADED_MODELS,
        keep_alive_s: float = KEEP_ALIVE_S,
        queue_max: int = QUEUE_MAX,
        clock: Callable[[], float] = time.monotonic,
        broken: BrokenModels | None = None,
    ) -> None:
        self._load = load
        self._broken: BrokenModels = broken if broken is not None else BrokenFile(None)
        self._resolve = resolve
        self._budget = budget_bytes
        self._max_loaded = max_loaded
        self.keep_alive_s = keep_alive_s
        self.queue_max = queue_max
        self._clock = clock
        self._cond = threading.Condition()
        self._models: dict[str, _Model] = {}
        self._line: list[_Ticket] = []
        self._peak_line = 0

    # ------------------------------------------------------------------ status
    @property
    def queue_depth(self) -> int:
        """Requests waiting for a slot or a model swap (not counting running ones)."""
        with self._cond:
            return len(self._line)

    @property
    def busy(self) -> bool:
        """Whether any request is using a model now."""
        with self._cond:
            return any(m.in_use for m in self._models.values())

    def loaded(self, *, counters: bool = False) -> list[LoadedModel]:
        """Models in memory with their slots, most recently used first; never waits on an
        engine unless ``counters`` is asked for.

        Without ``counters`` (every response's context header, ``/health``, the window's
        status) a model's ``stats`` is the snapshot its engine last reported
        (``last_stats``; None for an engine that keeps none): a stuck worker delays no
        request that does not use it. With ``counters`` (``/metrics``, ``bench``) each
        engine is asked now, outside the lock (a worker's answer crosses a pipe, and a
        busy or dying one may be slow); each model is held in use meanwhile, so none is
        closed under the question."""
        now = self._clock()

        def record(m: _Model, engine: Engine, stats: EngineStats | None) -> LoadedModel:
            return LoadedModel(
                m.spec.model_id,
                engine.report,
                now - m.last_used,
                m.requests,
                m.streams,
                m.parallel,
                m.in_use,
                stats,
                m.peak_streams,
            )

        with self._cond:
            models = [
                m
                for m in sorted(self._models.values(), key=lambda m: -m.last_used)
                if m.engine is not None and engine_alive(m.engine)
            ]
            # Read under the lock: the figures of one moment.
            rows = [
                (m, m.engine, record(m, m.engine, None)) for m in models if m.engine is not None
            ]
            if not counters:
                return [
                    replace(row, stats=getattr(engine, "last_stats", None))
                    for _, engine, row in rows
                ]
            for model in models:
                model.in_use += 1
        try:
            return [replace(row, stats=engine.stats()) for _, engine, row in rows]
        finally:
            with self._cond:
                for model in models:
                    model.in_use -= 1
                self._cond.notify_all()

    @property
    def peak_queue_depth(self) -> int:
        """The longest the waiting line has been since this scheduler started."""
        with self._cond:
            return self._peak_line

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` (read of this scheduler's status) holds; False on timeout.

        Woken by every admission, release, queue change and unload, so callers (tests,
        shutdown) wait on the event itself rather than polling.
        """
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    # ------------------------------------------------------------------ admission
    def _slots_needed(self, ticket: _Ticket, model: _Model) -> int:
        return 1 if ticket.stream or model.parallel <= 1 else 0

    def _blocked(self, ticket: _Ticket) -> bool:
        """Whether an earlier request in the line must go first (FIFO fairness)."""
        model = self._models.get(ticket.model_id)
        for earlier in self._line:
            if earlier is ticket:
                return False
            if earlier.swap:
                return True  # let the models it waits for drain, or it starves
            if earlier.model_id != ticket.model_id:
                continue
            if (
                model is None
                or model.engine is None
                or earlier.stream
                or ticket.stream
                or self._slots_needed(ticket, model)
            ):
                return True
        return False

    def _estimate(self, spec: ModelSpec) -> int:
        return spec.estimated_bytes

    def _victims(self, spec: ModelSpec) -> list[_Model]:
        """Local models to unload so ``spec`` fits: idle ones first, least recently used first.

        A remote model (``remote_spec``) holds no memory here: it neither counts toward
        ``max_loaded`` and the budget nor makes a local model leave.
        """
        if not is_local(spec):
            return []
        need = self._estimate(spec)
        left = sorted(
            (m for m in self._models.values() if is_local(m.spec)),
            key=lambda m: (m.in_use > 0, m.last_used),
        )
        chosen: list[_Model] = []
        while left:
            used = sum(self._estimate(m.spec) for m in left)
            over = len(left) >= self._max_loaded or (
                self._budget is not None and used + need > self._budget
            )
            if not over:
                break
            chosen.append(left.pop(0))
        return chosen

    def _close(self, model: _Model, why: str) -> None:
        """Drop ``model``; caller holds the lock and has checked that nothing uses it."""
        assert model.in_use == 0
        log.debug("unload %s: %s", model.spec.model_id, why)
        self._models.pop(model.spec.model_id, None)
        if model.engine is not None:
            model.engine.close()
        self._cond.notify_all()

    def _try_admit(self, ticket: _Ticket, spec: ModelSpec) -> bool:
        """Admit ``ticket`` if it may start now (caller holds the lock)."""
        if self._blocked(ticket):
            return False
        model = self._models.get(spec.model_id)
        if model is not None and (model.spec != spec or not engine_alive(model.engine)):
            if model.in_use:  # reload once the old plan or the crashed worker is unused
                ticket.swap = model.spec != spec  # a crash's requests end by themselves
                return False
            self._close(
                model,
                "its load plan changed; reloading"
                if model.spec != spec
                else "its worker stopped; starting a fresh one",
            )
            model = None
        if model is not None:
            if model.engine is None:
                return False  # another request is loading it
            need = self._slots_needed(ticket, model)
            if model.streams + need > model.parallel:
                return False
            model.streams += need
            model.peak_streams = max(model.peak_streams, model.streams)
            ticket.slots = need
        else:
            victims = self._victims(spec)
            if any(v.in_use for v in victims):
                ticket.swap = True
                return False
            for victim in victims:
                self._close(victim, f"swapped out for {spec.model_id} (least recently used)")
            model = _Model(spec, None, self._clock())
            self._models[spec.model_id] = model
            ticket.loads = True
        ticket.swap = False
        model.in_use += 1
        model.last_used = self._clock()
        return True

    @contextmanager
    def _use(
        self,
        ref: str,
        *,
        stream: bool,
        cancel: threading.Event | None = None,
        count: bool = True,
        context_length: int | None = None,
        cpu_moe: str | int | None = None,
    ) -> Iterator[_Lease]:
        """Hold one admission to ``ref``'s engine (loading it first if needed; with
        ``context_length`` or ``cpu_moe``, loaded with that context or expert placement:
        a different one reloads it)."""
        asked = {"context_length": context_length, "cpu_moe": cpu_moe}
        spec = self._resolve(ref, **{k: v for k, v in asked.items() if v is not None})
        if why := self._broken.reason(spec.model_id):
            raise ModelBroken(
                f"{spec.model_id} crashed every time it loaded ({why}); it is not loaded "
                f"again until you retry it (edgedesk models retry {spec.model_id}, or "
                "Retry on the Models page)",
                kind="model_broken",
                params={"model": spec.model_id, "reason": why},
            )
        started = time.perf_counter()
        ticket = _Ticket(spec.model_id, stream)
        with self._cond:
            if self._try_admit(ticket, spec):
                self._cond.notify_all()  # ``wait_until`` callers watch admissions too
            else:
                if len(self._line) >= self.queue_max:
                    raise QueueFull(
                        f"every slot is busy and {len(self._line)} requests are already "
                        "waiting for the model; retry shortly",
                        retry_after_s=RETRY_AFTER_S,
                    )
                self._line.append(ticket)
                self._peak_line = max(self._peak_line, len(self._line))
                self._cond.notify_all()
                try:
                    while not self._try_admit(ticket, spec):
                        if cancel is not None and cancel.is_set():
                            raise Cancelled("stopped while waiting for the model")
                        self._cond.wait(CANCEL_POLL_S if cancel is not None else None)
                finally:
                    self._line.remove(ticket)
                    self._cond.notify_all()  # the next in line may be first now
            model = self._models[spec.model_id]
            if count:
                model.requests += 1
        waited = time.perf_counter() - started
        load_s = 0.0
        if ticket.loads:
            load_s = self._load_into(model, ticket)
        assert model.engine is not None
        try:
            yield _Lease(model.engine, waited, load_s)
        finally:
            with self._cond:
                model.in_use -= 1
                model.streams -= ticket.slots
                model.last_used = self._clock()
                self._cond.notify_all()

    def _load_into(self, model: _Model, ticket: _Ticket) -> float:
        """Load the engine for the reserved ``model`` record, outside the lock."""
        started = time.perf_counter()
        log.debug(
            "load %s: estimated %d MiB",
            model.spec.model_id,
            model.spec.estimated_bytes // (1024 * 1024),
        )
        try:
            engine = self._load(model.spec)
        except BaseException as exc:
            log.debug(
                "load %s: failed after %.2f s (%s)",
                model.spec.model_id,
                time.perf_counter() - started,
                type(exc).__name__,
            )
            with self._cond:
                model.in_use -= 1
                self._models.pop(model.spec.model_id, None)
                self._cond.notify_all()
            if isinstance(exc, EngineCrashed):
                self._crashed_on_load(model.spec.model_id, exc)
            if isinstance(exc, EdgeDeskError) or not isinstance(exc, Exception):
                raise
            # A bad file must not take the app down.
            raise ModelLoadError(f"could not load {model.spec.model_id}: {exc}") from None
        self._broken.loaded(model.spec.model_id)
        with self._cond:
            gone = self._models.get(model.spec.model_id) is not model
            if gone:  # ``close`` (shutdown) came during the load: nobody would close it
                model.in_use -= 1
                self._cond.notify_all()
        if gone:
            engine.close()
            raise EdgeDeskError(
                f"{model.spec.model_id} was unloaded while it loaded (shutting down); "
                "send the request again"
            )
        with self._cond:
            model.engine = engine
            model.parallel = max(1, int(engine.parallel))
            ticket.slots = self._slots_needed(ticket, model)
            model.streams += ticket.slots
            model.peak_streams = max(model.peak_streams, model.streams)
            self._cond.notify_all()
        elapsed = time.perf_counter() - started
        log.debug(
            "load %s: ready in %.2f s, %d slots", model.spec.model_id, elapsed, model.parallel
        )
        return elapsed

    def _crashed_on_load(self, model_id: str, exc: EngineCrashed) -> None:
        """Count a load that crashed its worker; the third in a row marks it broken."""
        reason = f"{exc.how}: {exc.why}" if exc.why else exc.how
        crashes = self._broken.crashed(model_id, reason, threshold=CRASHES_TO_BROKEN)
        log.info("load %s: the worker crashed (%d in a row): %s", model_id, crashes, exc.how)

    def retry(self, model: str) -> bool:
        """Any thread: load ``model`` again at its next request although it was marked
        broken; True if it was."""
        return self._broken.clear(model)

    # ------------------------------------------------------------------ model lifecycle
    def load(self, model: str) -> LoadReport:
        """Load ``model`` now (preload / warm-up) and return how it was loaded."""
        with self._use(model, stream=False, count=False) as lease:
            return lease.engine.report

    def unload(self, model: str) -> bool:
        """Free ``model`` once no request is using it; True if it was loaded."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._models.get(model) is None or self._models[model].in_use == 0
            )
            present = self._models.get(model)
            if present is not None:
                self._close(present, "unload asked for")
            return present is not None

    def forget_saved(self) -> int:
        """Any thread, never waiting: every loaded model drops the conversations it keeps
        for reuse (RAM copies, their disk files, idle slots) before its next request, as
        a deletion or an encryption change needs. Returns how many models were told."""
        with self._cond:
            engines = [m.engine for m in self._models.values() if m.engine is not None]
        told = 0
        for engine in engines:
            # Only a local engine keeps conversations (remote ones and test fakes do not).
            forget = getattr(engine, "forget_saved", None)
            if callable(forget):
                forget()
                told += 1
        return told

    def reap_idle(self) -> list[str]:
        """Unload models idle longer than keep-alive; never one a request is using."""
        now = self._clock()
        with self._cond:
            idle = [
                m
                for m in self._models.values()
                if m.in_use == 0 and m.engine is not None and now - m.last_used >= self.keep_alive_s
            ]
            for model in idle:
                self._close(
                    model,
                    f"idle {now - model.last_used:.0f} s (keep-alive {self.keep_alive_s:g} s)",
                )
        return [m.spec.model_id for m in idle]

    def close(self) -> None:
        """Unload everything (app shutdown, after the window and server stopped)."""
        with self._cond:
            for model in list(self._models.values()):
                self._models.pop(model.spec.model_id, None)
                log.debug("unload %s: shutting down", model.spec.model_id)
                if model.engine is not None:
                    model.engine.close()
            self._cond.notify_all()

    # ------------------------------------------------------------------ work
    def _run_stream(
        self,
        model: str,
        produce: Callable[[Engine], Iterator[Delta]],
        cancel: threading.Event | None,
        context_length: int | None = None,
        cpu_moe: str | int | None = None,
    ) -> Iterator[Delta]:
        with self._use(
            model, stream=True, cancel=cancel, context_length=context_length, cpu_moe=cpu_moe
        ) as lease:
            if cancel is not None and cancel.is_set():
                raise Cancelled("stopped before it started")
            for delta in produce(lease.engine):
                yield (
                    delta
                    if delta.timings is None
                    else replace(
                        delta,
                        timings=replace(delta.timings, queue_s=lease.waited_s, load_s=lease.load_s),
                    )
                )

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream a chat answer from ``model`` once it has a free slot (loaded with
        ``call.params.context_length`` and ``call.params.cpu_moe`` when they are set)."""
        return self._run_stream(
            model,
            lambda e: e.stream_chat(call, cancel),
            cancel,
            call.params.context_length,
            call.params.cpu_moe,
        )

    def stream_completion(
        self,
        model: str,
        prompt: str,
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[Delta]:
        """Stream a plain-text completion from ``model`` once it has a free slot."""
        return self._run_stream(
            model, lambda e: e.stream_completion(prompt, params, cancel), cancel
        )

    def stream_infill(
        self,
        model: str,
        prefix: str,
        suffix: str,
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[Delta]:
        """Stream the text between ``prefix`` and ``suffix`` from ``model`` in a free slot."""
        return self._run_stream(
            model, lambda e: e.stream_infill(prefix, suffix, params, cancel), cancel
        )

    def embed(
        self, model: str, texts: Sequence[str], cancel: threading.Event | None = None
    ) -> list[list[float]]:
        """Embeddings from ``model``, admitted beside running work (the engine batches);
        ``cancel`` set stops it between decodes (Cancelled)."""
        vectors: list[list[float]] = self.with_engine(
            model, lambda e: e.embed(texts, cancel), cancel
        )
        return vectors

    def rerank(
        self,
        model: str,
        query: str,
        documents: Sequence[str],
        cancel: threading.Event | None = None,
    ) -> list[float]:
        """Relevance scores from a reranker ``model``, admitted beside running work."""
        scores: list[float] = self.with_engine(
            model, lambda e: e.rerank(query, documents, cancel), cancel
        )
        return scores

    def with_engine(
        self, model: str, work: Callable[[Engine], T], cancel: threading.Event | None = None
    ) -> T:
        """Run ``work`` (thread-safe engine calls, no streams) on ``model``, as one request;
        ``cancel`` set while it waits for the model leaves the line (Cancelled)."""
        with self._use(model, stream=False, cancel=cancel) as lease:
            if cancel is not None and cancel.is_set():
                raise Cancelled("stopped before it started")
            return work(lease.engine)
