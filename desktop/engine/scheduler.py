"""The one gate in front of llama.cpp, shared by the chat window and the HTTP server.

Requests are served strictly in arrival order, one at a time (llama.cpp contexts are not
thread-safe and one GPU gains nothing from interleaving). A new request never cancels
one in progress: it waits, or is refused with QueueFull when the queue is full. Models
are loaded on demand through a swappable ``load`` function, swapped within a memory
budget, and unloaded after ``keep_alive_s`` idle seconds by ``reap_idle()``, which the
UI and the server runner call on their own timers (the core starts no threads).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from desktop.engine.types import Chunk, GenerationParams, LoadReport, Message, ModelSpec
from desktop.errors import Cancelled, EdgeDeskError, ModelLoadError, QueueFull

# How often a waiting request looks at its cancel event (a condition has no other wake-up).
CANCEL_POLL_S = 0.05


class Engine(Protocol):
    """What the scheduler needs from a loaded model."""

    report: LoadReport

    def stream_chat(self, messages: Sequence[Message], params: GenerationParams,
                    cancel: threading.Event | None = None,
                    tools: Sequence[dict[str, Any]] | None = None,
                    template_kwargs: Mapping[str, Any] | None = None) -> Iterator[Chunk]:
        """Stream an answer to a conversation (``template_kwargs``: e.g. enable_thinking)."""
        ...

    def stream_completion(self, prompt: str, params: GenerationParams,
                          cancel: threading.Event | None = None) -> Iterator[Chunk]:
        """Stream a plain continuation."""
        ...

    def stream_infill(self, prefix: str, suffix: str, params: GenerationParams,
                      cancel: threading.Event | None = None) -> Iterator[Chunk]:
        """Stream fill-in-the-middle text (raises InvalidRequest without FIM tokens)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings."""
        ...

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        """The model's own tokens for ``text``."""
        ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance scores of ``documents`` for ``query``."""
        ...

    def close(self) -> None:
        """Free memory."""
        ...


LoadFn = Callable[[ModelSpec], Engine]
ResolveFn = Callable[[str], ModelSpec]


@dataclass
class _Slot:
    spec: ModelSpec
    engine: Engine
    last_used: float
    requests: int = 0


@dataclass(frozen=True)
class LoadedModel:
    """A model currently in memory, for status displays and /metrics."""

    model_id: str
    report: LoadReport
    idle_s: float
    requests: int


class _FifoGate:
    """A lock granted in strict arrival order, with a bounded waiting line."""

    def __init__(self, queue_max: int) -> None:
        self._cond = threading.Condition()
        self._line: deque[object] = deque()
        self._busy = False
        self.queue_max = queue_max

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._line)

    @property
    def busy(self) -> bool:
        return self._busy

    @contextmanager
    def hold(self, cancel: threading.Event | None = None) -> Iterator[float]:
        """Wait for our turn (yields the seconds spent waiting).

        A request whose ``cancel`` is set while it waits leaves the line (Cancelled): an
        IDE abandons most completions as the user types on, and each would otherwise
        keep a place in the queue and then pay its whole prompt before noticing.
        """
        ticket = object()
        started = time.perf_counter()
        with self._cond:
            if self._busy and len(self._line) >= self.queue_max:
                raise QueueFull(
                    f"{len(self._line)} requests are already waiting for the model; "
                    "retry shortly", retry_after_s=2,
                )
            self._line.append(ticket)
            while self._busy or self._line[0] is not ticket:
                if cancel is not None and cancel.is_set():
                    self._line.remove(ticket)
                    self._cond.notify_all()  # the next in line may be first now
                    raise Cancelled("stopped while waiting for the model")
                self._cond.wait(CANCEL_POLL_S if cancel is not None else None)
            self._line.popleft()
            self._busy = True
        try:
            yield time.perf_counter() - started
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


class Scheduler:
    """Serialises all model work; loads, swaps and unloads models on demand."""

    def __init__(self, load: LoadFn, resolve: ResolveFn, *, budget_bytes: int | None = None,
                 max_loaded: int = 2, keep_alive_s: float = 600.0, queue_max: int = 16,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._load = load
        self._resolve = resolve
        self._budget = budget_bytes
        self._max_loaded = max_loaded
        self.keep_alive_s = keep_alive_s
        self._clock = clock
        self._gate = _FifoGate(queue_max)
        self._slots: dict[str, _Slot] = {}
        self._slots_lock = threading.Lock()

    # ------------------------------------------------------------------ status
    @property
    def queue_depth(self) -> int:
        """Requests waiting for their turn (not counting the one running)."""
        return self._gate.waiting

    @property
    def busy(self) -> bool:
        """Whether a request is running now."""
        return self._gate.busy

    def loaded(self) -> list[LoadedModel]:
        """Models in memory, most recently used first."""
        now = self._clock()
        with self._slots_lock:
            slots = sorted(self._slots.values(), key=lambda s: -s.last_used)
            return [LoadedModel(s.spec.model_id, s.engine.report, now - s.last_used, s.requests)
                    for s in slots]

    # ------------------------------------------------------------------ model lifecycle
    def _estimate(self, spec: ModelSpec) -> int:
        return int(spec.options.get("estimated_bytes", 0))

    def _evict_for(self, spec: ModelSpec) -> None:
        need = self._estimate(spec)

        def over() -> bool:
            if len(self._slots) >= self._max_loaded:
                return True
            if self._budget is None:
                return False
            used = sum(self._estimate(s.spec) for s in self._slots.values())
            return used + need > self._budget

        while self._slots and over():
            oldest = min(self._slots.values(), key=lambda s: s.last_used)
            self._unload_slot(oldest.spec.model_id)

    def _unload_slot(self, model_id: str) -> None:
        slot = self._slots.pop(model_id, None)
        if slot is not None:
            slot.engine.close()

    def _engine(self, model: str) -> tuple[_Slot, float]:
        """The loaded engine for ``model`` (loading it first); caller holds the gate."""
        spec = self._resolve(model)
        with self._slots_lock:
            slot = self._slots.get(spec.model_id)
            if slot is not None and slot.spec != spec:
                self._unload_slot(spec.model_id)  # settings changed: reload with the new plan
                slot = None
            if slot is not None:
                return slot, 0.0
            self._evict_for(spec)
        started = time.perf_counter()
        try:
            engine = self._load(spec)
        except EdgeDeskError:
            raise
        except Exception as exc:  # a bad file must not take the app down
            raise ModelLoadError(f"could not load {spec.model_id}: {exc}") from None
        slot = _Slot(spec, engine, self._clock())
        with self._slots_lock:
            self._slots[spec.model_id] = slot
        return slot, time.perf_counter() - started

    def load(self, model: str) -> LoadReport:
        """Load ``model`` now (preload / warm-up) and return how it was loaded."""
        with self._gate.hold():
            slot, _ = self._engine(model)
            slot.last_used = self._clock()
            return slot.engine.report

    def unload(self, model: str) -> bool:
        """Free ``model`` once no request is using it; True if it was loaded."""
        with self._gate.hold(), self._slots_lock:
            present = any(s.spec.model_id == model for s in self._slots.values())
            self._unload_slot(model)
            return present

    def reap_idle(self) -> list[str]:
        """Unload models idle longer than keep-alive; never blocks behind a running request."""
        if self._gate.busy:
            return []
        now = self._clock()
        with self._slots_lock:
            idle = [mid for mid, s in self._slots.items() if now - s.last_used >= self.keep_alive_s]
            for model_id in idle:
                self._unload_slot(model_id)
        return idle

    def close(self) -> None:
        """Unload everything (app shutdown)."""
        with self._slots_lock:
            for model_id in list(self._slots):
                self._unload_slot(model_id)

    # ------------------------------------------------------------------ work
    def _run_stream(self, model: str, produce: Callable[[Engine], Iterator[Chunk]],
                    cancel: threading.Event | None) -> Iterator[Chunk]:
        with self._gate.hold(cancel) as waited:
            if cancel is not None and cancel.is_set():
                raise Cancelled("stopped before it started")
            slot, load_s = self._engine(model)
            slot.requests += 1
            try:
                for chunk in produce(slot.engine):
                    yield chunk if chunk.timings is None else _with_queue_timings(
                        chunk, waited, load_s)
            finally:
                slot.last_used = self._clock()

    def stream_chat(self, model: str, messages: Sequence[Message], params: GenerationParams,
                    cancel: threading.Event | None = None,
                    tools: Sequence[dict[str, Any]] | None = None,
                    template_kwargs: Mapping[str, Any] | None = None) -> Iterator[Chunk]:
        """Stream a chat answer from ``model`` once it is this request's turn."""
        return self._run_stream(
            model, lambda e: e.stream_chat(messages, params, cancel, tools, template_kwargs),
            cancel)

    def stream_completion(self, model: str, prompt: str, params: GenerationParams,
                          cancel: threading.Event | None = None) -> Iterator[Chunk]:
        """Stream a plain-text completion from ``model`` once it is this request's turn."""
        return self._run_stream(model, lambda e: e.stream_completion(prompt, params, cancel),
                                cancel)

    def stream_infill(self, model: str, prefix: str, suffix: str, params: GenerationParams,
                      cancel: threading.Event | None = None) -> Iterator[Chunk]:
        """Stream the text between ``prefix`` and ``suffix`` from ``model`` in its turn."""
        return self._run_stream(
            model, lambda e: e.stream_infill(prefix, suffix, params, cancel), cancel)

    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """Embeddings from ``model`` (waits for its turn like every other request)."""
        vectors: list[list[float]] = self.with_engine(model, lambda e: e.embed(texts))
        return vectors

    def rerank(self, model: str, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance scores from a reranker ``model`` (waits for its turn like the rest)."""
        scores: list[float] = self.with_engine(model, lambda e: e.rerank(query, documents))
        return scores

    def with_engine(self, model: str, work: Callable[[Engine], Any]) -> Any:
        """Run ``work`` with exclusive use of ``model``'s engine, counted as one request."""
        with self._gate.hold():
            slot, _ = self._engine(model)
            slot.requests += 1
            try:
                return work(slot.engine)
            finally:
                slot.last_used = self._clock()


def _with_queue_timings(chunk: Chunk, waited: float, load_s: float) -> Chunk:
    from dataclasses import replace

    assert chunk.timings is not None
    return replace(chunk, timings=replace(chunk.timings, queue_s=waited, load_s=load_s))
