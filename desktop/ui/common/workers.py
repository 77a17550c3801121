"""QObject workers on QThreads: the only place the window runs long work.

Each worker lives on its own QThread and reports through signals, which Qt delivers
to the window's thread as queued events, so the event loop never waits on llama.cpp.
``WorkerPool`` owns the threads and stops them all on shutdown.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QThread, Signal, Slot

from desktop.base.errors import Cancelled, EdgeDeskError
from desktop.catalog import CancelEvent
from desktop.chat import (
    ApprovalBatch,
    ChatCore,
    Decision,
    EmbeddingModelMissing,
    PendingTurn,
    ToolStep,
)
from desktop.engine import Delta
from desktop.store import WINDOW_CLIENT, WINDOW_ROUTE, UsageRow
from desktop.ui.common.error_text import error_text

# Coalesce streamed tokens into one signal per interval: a fast model yields thousands
# of tokens a second, and one queued event per token would flood the event loop.
EMIT_INTERVAL_S = 0.03
WORKER_NICE = 5


@dataclass
class ApprovalRequest:
    """A round's tool calls waiting for the user: the worker blocks until ``answer``."""

    batch: ApprovalBatch
    decisions: list[Decision] = field(default_factory=list)
    answered: threading.Event = field(default_factory=threading.Event)

    def answer(self, decisions: Sequence[Decision]) -> None:
        """The user's choice per ask (window's thread); wakes the waiting worker."""
        self.decisions = list(decisions)
        self.answered.set()


@dataclass(frozen=True)
class StreamDelta:
    """Text and reasoning produced since the previous signal."""

    text: str
    reasoning: str


def _yield_cpu_to_the_window() -> None:
    """Lower this thread's CPU priority (and that of the threads llama.cpp starts from it).

    On a machine with few cores, generation saturates the CPU and the event loop would
    wait for a time slice; a niced worker lets the window repaint within a frame while
    costing generation almost nothing. Linux honours per-thread nice values; elsewhere
    QThread.LowPriority (set when the thread starts) does the same job.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):  # not permitted: run at normal priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICE)


class Worker(QObject):
    """Base of all workers: ``run`` does the work on the worker's thread, then ``done``.

    Connect signals only to methods of QObjects living on the window's thread (never to
    lambdas): only then does Qt queue the call to that thread. Signals carry the worker's
    ``key`` so one handler can serve many workers.
    """

    done = Signal()
    failed = Signal(str, str)  # key, message

    def __init__(self, key: str = "") -> None:
        super().__init__()
        self.key = key

    @Slot()
    def run(self) -> None:
        """Do the work; a user-fixable error becomes ``failed`` with its message."""
        _yield_cpu_to_the_window()
        try:
            self.work()
        except EdgeDeskError as exc:
            self.failed.emit(self.key, error_text(exc))
        except Exception as exc:  # a worker must never take the app down
            self.failed.emit(self.key, error_text(exc))
        finally:
            self.done.emit()

    def work(self) -> None:
        """Subclasses do their blocking work here."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Ask the work to stop soon (default: nothing to stop)."""


class GenerationWorker(Worker):
    """Runs one turn through ``ChatCore.drive`` and turns its callbacks into signals.

    The turn itself (saving the question, retrieval, streaming, a cancel while waiting,
    saving the answer or marking it broken off) is the core's; this worker only batches
    the streamed words and hands everything to the window's thread. ``cancel`` stops the
    answer within a token.
    """

    delta = Signal(object)  # StreamDelta
    reading = Signal(int, int)  # prompt tokens read so far, in all (before any words)
    finished_chunk = Signal(object)  # the final Delta (usage, timings, finish reason)
    prepared = Signal(object)  # the numbered sources a grounded answer is given
    model_missing = Signal(str)  # a grounded chat's embedding model is not downloaded
    tool_step = Signal(object)  # a finished round of tool calls (chat.conversation.ToolStep)
    approval_needed = Signal(object)  # ApprovalRequest: the window asks, then answers it

    def __init__(
        self,
        core: ChatCore,
        pending: PendingTurn,
        usage: Callable[[UsageRow], None] | None = None,
    ) -> None:
        super().__init__(pending.chat.model)
        self._core = core
        self._pending = pending
        self._usage = usage  # the turn's content-free usage row goes here (client EdgeDesk)
        self._first: float | None = None  # when the first words came
        self.stop_event = threading.Event()
        self._text: list[str] = []  # words not yet signalled
        self._reasoning: list[str] = []
        self._last = 0.0

    def cancel(self) -> None:
        """Stop generating; the partial answer is kept and ends with 'cancelled'."""
        self.stop_event.set()

    def work(self) -> None:
        """Drive the turn; forward its chunks in batches, then the final one."""
        self._last = started = time.perf_counter()
        try:
            final = self._core.drive(
                self._pending,
                self._on_chunk,
                self.stop_event,
                on_sources=self.prepared.emit,
                approve_all=self._approve,
                on_step=self._on_step,
            )
        except EmbeddingModelMissing as exc:
            self.model_missing.emit(exc.model)  # before ``failed``: the view offers it
            self._record(started, None, exc)
            raise
        except Exception as exc:
            # The model failed mid-answer (a remote dropped the stream): every word that
            # came stays on screen above the error, not only those of earlier batches.
            self._flush()
            self._record(started, None, exc)
            raise
        self._flush()
        self._record(started, final, None)
        self.finished_chunk.emit(final)

    def _record(self, started: float, final: Delta | None, error: Exception | None) -> None:
        """Hand the turn's usage (counts and times, no words) to ``usage``."""
        if self._usage is None:
            return
        now = time.perf_counter()
        usage = final.usage if final is not None else None
        code = getattr(error, "code", None) if error is not None else None
        self._usage(
            UsageRow(
                time=time.time(),
                key_name=None,
                client=WINDOW_CLIENT,
                model=self._pending.chat.model,
                route=WINDOW_ROUTE,
                status=500 if error is not None else 200,
                error_code=str(code or type(error).__name__) if error is not None else None,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                cached_tokens=usage.cached_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                ttft_ms=None if self._first is None else (self._first - started) * 1000,
                total_ms=(now - started) * 1000,
            )
        )

    def _approve(self, batch: ApprovalBatch) -> list[Decision]:
        """Ask the window about the round's calls and wait (Stop denies them all)."""
        request = ApprovalRequest(batch)
        self.approval_needed.emit(request)
        while not request.answered.wait(0.1):
            if self.stop_event.is_set():
                return ["deny"] * len(batch.asks)
        return request.decisions

    def _on_step(self, step: ToolStep) -> None:
        self._flush()  # the round's words reach the window before the round itself
        self.tool_step.emit(step)

    def _on_chunk(self, chunk: Delta) -> None:
        if chunk.read is not None:
            self.reading.emit(*chunk.read)  # one a micro-batch: seconds apart, unbatched
            return
        if self._first is None and (chunk.text or chunk.reasoning):
            self._first = time.perf_counter()
        self._text.append(chunk.text)
        self._reasoning.append(chunk.reasoning)
        now = time.perf_counter()
        if now - self._last >= EMIT_INTERVAL_S:
            self._flush()
            self._last = now

    def _flush(self) -> None:
        if any(self._text) or any(self._reasoning):
            self.delta.emit(StreamDelta("".join(self._text), "".join(self._reasoning)))
        self._text.clear()
        self._reasoning.clear()


class TaskWorker(Worker):
    """Runs one blocking call (load a model, unload idle ones) and emits its result."""

    result = Signal(str, object)  # key, what the task returned

    def __init__(self, task: Callable[[], object], key: str = "") -> None:
        super().__init__(key)
        self._task = task

    def work(self) -> None:
        """Call the task and report what it returned."""
        self.result.emit(self.key, self._task())


class WorkerPool(QObject):
    """Starts each worker on its own QThread and can stop them all."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._running: dict[Worker, QThread] = {}

    def start(self, worker: Worker) -> Worker:
        """Move ``worker`` to a new thread and run it; the thread ends when it is done."""
        thread = QThread()
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.done.connect(self._worker_done)  # queued to this (the window's) thread
        self._running[worker] = thread
        thread.start(QThread.Priority.LowPriority)
        return worker

    @Slot()
    def _worker_done(self) -> None:
        worker = self.sender()
        thread = self._running.pop(worker, None) if isinstance(worker, Worker) else None
        if thread is not None:
            thread.quit()
            thread.wait()

    @property
    def active(self) -> int:
        """How many workers are still running."""
        return len(self._running)

    def stop_all(self, timeout_ms: int = 5000) -> bool:
        """Cancel every worker and wait for its thread; False if one did not stop in time."""
        clean = True
        for worker, thread in list(self._running.items()):
            worker.cancel()
            thread.quit()
            clean = thread.wait(timeout_ms) and clean
        self._running.clear()
        return clean


PullTask = Callable[[Callable[[object], None], threading.Event], object]


class DownloadWorker(Worker):
    """Runs a model pull; ``cancel`` pauses it (the partial file is kept for resume)."""

    progress = Signal(str, object)  # key, catalog._download.Progress
    installed = Signal(str, object)  # key, the InstalledModel
    paused = Signal(str)  # key

    def __init__(self, task: PullTask, key: str) -> None:
        super().__init__(key)
        self._task = task
        self.stop_event = CancelEvent()  # wakes a read stalled on a silent server too

    def cancel(self) -> None:
        """Stop transferring now; pulling again resumes where it stopped."""
        self.stop_event.set()

    def work(self) -> None:
        """Pull, reporting progress; a pause is not a failure."""
        try:
            model = self._task(lambda p: self.progress.emit(self.key, p), self.stop_event)
        except Cancelled:
            self.paused.emit(self.key)
            return
        if self.stop_event.is_set():
            self.paused.emit(self.key)
        else:
            self.installed.emit(self.key, model)


IndexTask = Callable[[Callable[[object], None], threading.Event], object]


class IndexWorker(Worker):
    """Indexes a document collection; ``cancel`` stops after the file being indexed."""

    progress = Signal(str, object)  # key (collection), retrieval._indexer.IndexProgress
    report = Signal(str, object)  # key, the IndexReport (also after a cancel)

    def __init__(self, task: IndexTask, key: str) -> None:
        super().__init__(key)
        self._task = task
        self.stop_event = threading.Event()

    def cancel(self) -> None:
        """Stop soon; files already indexed stay indexed."""
        self.stop_event.set()

    def work(self) -> None:
        """Index, reporting progress, then the report."""
        result = self._task(lambda p: self.progress.emit(self.key, p), self.stop_event)
        self.report.emit(self.key, result)
