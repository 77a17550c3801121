"""Embeddings and rerank scores, with concurrent callers sharing decodes.

Every ``run`` call from any thread hands its token sequences to one worker thread,
which packs the sequences of all waiting callers into as few decodes as fit (one
sequence id each, up to ``n_batch`` tokens and ``n_seq_max`` sequences per decode).
An encoder sees each sequence whole, in one micro-batch, as non-causal models need.
A caller's cancel event is checked between decodes: a request whose client left stops
within one decode, its remaining sequences never computed.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from desktop.base.errors import Cancelled, EdgeDeskError
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._native import BatchWorker


@dataclass(eq=False)
class _Job:
    sequences: list[list[int]]
    width: int
    results: list[list[float] | None] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    error: Exception | None = None
    next: int = 0  # first sequence not yet packed into a decode
    cancel: threading.Event | None = None


class EmbedLoop(BatchWorker):
    """Owns an embedding context's decodes on its own thread.

    ``run``, ``decodes`` and ``stop`` may be called from any thread; llama.cpp is only
    called from the worker thread.
    """

    def __init__(
        self,
        ctx: llama_cpp.llama_context_p,
        *,
        n_batch: int,
        n_seq_max: int,
        on_decode: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__(n_batch, "edgedesk-embed", self._work)
        self._ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._n_batch = n_batch
        self._n_seq_max = n_seq_max
        self._on_decode = on_decode  # called on the worker after each decode (tests)
        self._jobs: deque[_Job] = deque()
        self.decodes = 0  # decode calls since load; fewer than callers means they shared
        self.cancelled = 0  # calls stopped by their cancel event before they were done
        self._start_worker()

    def run(
        self, sequences: list[list[int]], width: int, cancel: threading.Event | None = None
    ) -> list[list[float]]:
        """Pooled output vectors (``width`` floats each) for ``sequences``, in order.

        ``cancel`` set (the client left) ends the call before its next decode with
        Cancelled; decodes other callers share are not held up.
        """
        if not sequences:
            return []
        if cancel is not None and cancel.is_set():
            raise Cancelled("the embedding request was cancelled")
        job = _Job(sequences, width, [None] * len(sequences), cancel=cancel)
        with self._lock:
            if self._stopping:
                raise EdgeDeskError("the model was unloaded; send the request again")
            self._jobs.append(job)
            self._lock.notify()
        job.done.wait()
        if job.error is not None:
            raise job.error
        return [vector for vector in job.results if vector is not None]

    def pending(self) -> int:
        """Callers waiting for their vectors (tests use it to line callers up)."""
        with self._lock:
            return len(self._jobs)

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._jobs and not self._stopping:
                    self._lock.wait()
                if self._stopping:
                    for job in self._jobs:
                        job.error = EdgeDeskError("the model was unloaded; send it again")
                        job.done.set()
                    return
                self._drop_cancelled()
                plan = self._pack()
            if not plan:
                continue
            try:
                self._decode(plan)
            except Exception as exc:  # a bug must reach the callers, never leave them hanging
                self._fail(plan, EdgeDeskError(f"embedding failed unexpectedly ({exc!r})"))

    def _fail(self, plan: list[tuple[_Job, int]], error: Exception) -> None:
        with self._lock:
            for job in {id(j): j for j, _ in plan}.values():
                job.error = error
                if job in self._jobs:
                    self._jobs.remove(job)
                job.done.set()

    def _drop_cancelled(self) -> None:
        """End the waiting calls whose cancel is set (lock held): no more decodes for them."""
        for job in [j for j in self._jobs if j.cancel is not None and j.cancel.is_set()]:
            self._jobs.remove(job)
            job.error = Cancelled("the embedding request was cancelled")
            self.cancelled += 1
            job.done.set()

    def _pack(self) -> list[tuple[_Job, int]]:
        """Sequences for the next decode, from as many waiting callers as fit (lock held)."""
        plan: list[tuple[_Job, int]] = []
        used = 0
        for job in self._jobs:
            while job.next < len(job.sequences) and len(plan) < self._n_seq_max:
                size = len(job.sequences[job.next])
                if plan and used + size > self._n_batch:
                    return plan
                plan.append((job, job.next))
                used += size
                job.next += 1
            if len(plan) >= self._n_seq_max:
                break
        return plan

    def _decode(self, plan: list[tuple[_Job, int]]) -> None:
        batch = self._batch
        n = 0
        for seq, (job, index) in enumerate(plan):
            tokens = job.sequences[index][: self._n_batch]
            for pos, token in enumerate(tokens):
                batch.token[n] = token
                batch.pos[n] = pos
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = seq
                batch.logits[n] = 1
                n += 1
        batch.n_tokens = n
        if self._memory is not None:
            llama_cpp.llama_memory_clear(self._memory, True)
        code = llama_cpp.llama_decode(self._ctx, batch)
        self.decodes += 1
        if self._on_decode is not None:
            self._on_decode(len(plan))
        error = (
            None
            if code == 0
            else EdgeDeskError(f"llama.cpp could not compute embeddings (code {code})")
        )
        for seq, (job, index) in enumerate(plan):
            if error is None:
                pointer = llama_cpp.llama_get_embeddings_seq(self._ctx, seq)
                job.results[index] = [float(x) for x in pointer[: job.width]]
            else:
                job.error = error
        with self._lock:
            for job in {id(j): j for j, _ in plan}.values():
                if job not in self._jobs:
                    continue  # already ended (cancelled meanwhile)
                if job.error is not None or (
                    job.next >= len(job.sequences) and all(r is not None for r in job.results)
                ):
                    self._jobs.remove(job)
                    job.done.set()


def pool(vectors: Sequence[Sequence[float]], weights: Sequence[int]) -> list[float]:
    """Token-weighted mean of window vectors, then L2-normalised."""
    if len(vectors) == 1:
        pooled = list(vectors[0])
    else:
        total = float(sum(weights))
        pooled = [
            sum(v[d] * w for v, w in zip(vectors, weights, strict=True)) / total
            for d in range(len(vectors[0]))
        ]
    norm = math.sqrt(sum(x * x for x in pooled))
    return [x / norm for x in pooled] if norm > 0 else pooled
