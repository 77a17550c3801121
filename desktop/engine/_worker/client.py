"""The app's side of a model's worker process: the ``Engine`` protocol over two pipes.

A ``WorkerEngine`` is a loaded worker (``start.start_worker`` makes one). A worker that
dies (an abort inside llama.cpp, a signal, the OS out of memory) ends each of its open
requests with ``EngineCrashed``, which names how it ended and the line of its log that
says why (``endings``); ``alive`` turns False, and the scheduler starts a fresh worker
at the model's next request. Its memory goes back to the OS when it exits.

The watchdog: a worker that stops answering (stopped, deadlocked, a driver that hangs,
paging without end) is killed and then ends like a crashed one. It misses its deadline
when nothing comes from it for ``hung_after_s`` (a quiet worker is pinged; its reading
thread answers whatever llama.cpp does), when a stream has not ended ``grace_s`` after
its own generation timeout (the engine ends it at the timeout itself), or when a call
has not been answered ``grace_s`` after ``call_timeout_s``. Status reads never wait on
it: ``last_stats`` is the snapshot the last answer left.

Threads: every method may be called from any thread, concurrently (each request has its
own queue; one lock guards the table of them). A reader thread, started here, receives
every answer and ends when the worker does; a watchdog thread kills it at a missed
deadline and has a pinger thread ping it (a write to a stopped worker's full pipe may
block; the watchdog never writes); ``close()`` waits for all of them.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import queue
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from desktop.base.errors import EdgeDeskError, EngineCrashed
from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    GenerationParams,
    LoadReport,
)
from desktop.engine._worker import wire
from desktop.engine._worker.endings import crash_error, error_of, log_tail, stopped_error

log = logging.getLogger("edgedesk.engine")
_Reply = TypeVar("_Reply", bound=wire.Value)  # the typed answer a call waits for
CANCEL_POLL_S = 0.05  # how often a waiting call looks at its cancel event
STATS_TIMEOUT_S = 1.0  # a counters read never hangs on a busy or stuck worker
HEARTBEAT_S = 1.0  # how often the watchdog looks, and pings a worker that has been quiet
CLOSE_TIMEOUT_S = 120.0  # for its conversations to reach the prompt cache; then killed
DRAIN_TIMEOUT_S = 10.0  # a stream stopped early waits this long for the worker's end


@dataclass(frozen=True)
class _Deadline:
    """When an open request must have ended, and the words if it has not."""

    at: float
    how: str


@dataclass(frozen=True)
class _Ended:
    """The worker is gone; every open request ends with ``error``."""

    error: EngineCrashed


class WorkerEngine:
    """One model loaded in a worker process of its own; implements ``Engine``."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        channel: wire.Channel,
        ready: wire.Ready,
        *,
        model_id: str,
        log_path: Path,
        started_s: float,
        hung_after_s: float,
        call_timeout_s: float | None,
        grace_s: float,
    ) -> None:
        self.report: LoadReport = ready.report
        self.model_id = model_id
        self.log_path = log_path
        self.start_s = started_s  # from starting the process to the model loaded
        self._parallel = ready.parallel
        self._process = process
        self._channel = channel
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, queue.SimpleQueue[Any]] = {}
        self._told: set[int] = set()  # requests whose cancel the worker has been sent
        self._ended: _Ended | None = None
        self._closing = False
        self._last_stats = EngineStats(slots_total=ready.parallel)
        # The watchdog's figures (see the module's docstring).
        self._hung_after_s = hung_after_s
        self._call_timeout_s = call_timeout_s
        self._grace_s = grace_s
        self._beat_s = min(HEARTBEAT_S, hung_after_s / 4)
        self._heard = time.monotonic()  # when the worker last sent anything
        self._deadlines: dict[int, _Deadline] = {}
        self._killed: str | None = None  # the deadline the watchdog killed it for
        self._pings = itertools.count(1)
        self._ping_due = threading.Event()
        self._quit_watch = threading.Event()
        self._reader = threading.Thread(target=self._read, name=f"worker-{model_id}", daemon=True)
        self._reader.start()
        self._watchdog = threading.Thread(
            target=self._watch, name=f"worker-{model_id}-watchdog", daemon=True
        )
        self._watchdog.start()
        # Pings go from a thread of their own: a write to a stopped worker's full pipe
        # blocks, and the watchdog must stay free to kill it.
        self._pinger = threading.Thread(
            target=self._ping, name=f"worker-{model_id}-ping", daemon=True
        )
        self._pinger.start()

    # ------------------------------------------------------------------ status
    @property
    def parallel(self) -> int:
        """How many generation streams the worker's engine runs at once."""
        return self._parallel

    @property
    def alive(self) -> bool:
        """False once the worker has ended (crashed, killed or closed)."""
        return self._ended is None and not self._closing

    @property
    def pid(self) -> int:
        """The worker's process id (for the log, and for tests that stop it)."""
        return self._process.pid

    @property
    def last_stats(self) -> EngineStats:
        """The counters the worker last reported, never waiting (a snapshot for status)."""
        return self._last_stats

    def stats(self) -> EngineStats:
        """The worker's counters, asked now (at most ``STATS_TIMEOUT_S``); the last ones
        read when it is busy, late on its heartbeat or gone."""
        if not self.alive or time.monotonic() - self._heard > 3 * self._beat_s:
            return self._last_stats
        try:
            counters = self._call(
                wire.Stats(self._new_id()), wire.Counters, None, timeout=STATS_TIMEOUT_S
            )
        except (EdgeDeskError, TimeoutError):
            return self._last_stats
        self._last_stats = counters.stats
        return self._last_stats

    # ------------------------------------------------------------------ streams
    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Stream an answer to a conversation from the worker's engine (its tool calls
        parsed there, on the final delta)."""
        return self._stream(wire.StreamChat(self._new_id(), call), cancel)

    def stream_completion(
        self, prompt: str, params: GenerationParams, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream a plain continuation from the worker's engine."""
        return self._stream(wire.StreamCompletion(self._new_id(), prompt, params), cancel)

    def stream_infill(
        self,
        prefix: str,
        suffix: str,
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[Delta]:
        """Stream fill-in-the-middle text from the worker's engine."""
        return self._stream(wire.StreamInfill(self._new_id(), prefix, suffix, params), cancel)

    # ------------------------------------------------------------------ calls
    def embed(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> list[list[float]]:
        """Normalised embeddings; ``cancel`` set stops the worker's work (Cancelled)."""
        message = wire.Embed(self._new_id(), list(texts), False)
        return self._call(message, wire.Vectors, cancel).vectors

    def embed_counted(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> tuple[list[list[float]], int | None]:
        """``embed``, plus the prompt tokens the engine counted."""
        message = wire.Embed(self._new_id(), list(texts), True)
        reply = self._call(message, wire.Vectors, cancel)
        return reply.vectors, reply.tokens

    def rerank(
        self, query: str, documents: Sequence[str], cancel: threading.Event | None = None
    ) -> list[float]:
        """Relevance scores of ``documents`` for ``query``."""
        message = wire.Rerank(self._new_id(), query, list(documents))
        return self._call(message, wire.Scores, cancel).scores

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        """The model's own tokens for ``text``."""
        message = wire.Tokenize(self._new_id(), text, add_bos, special)
        return self._call(message, wire.Tokens, None).tokens

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Text for token ids."""
        return self._call(wire.Detokenize(self._new_id(), list(tokens)), wire.Text, None).text

    def render(self, call: ChatCall) -> str:
        """The prompt text for a conversation, rendered by the worker's template."""
        return self._call(wire.Render(self._new_id(), call), wire.Text, None).text

    def count_chat_tokens(self, call: ChatCall) -> int:
        """The prompt tokens ``call`` would report, its pictures' tokens included."""
        return self._call(wire.CountChat(self._new_id(), call), wire.Count, None).count

    def prompt_tokens(self, prompt: str) -> list[int]:
        """Tokens of a rendered prompt."""
        return self._call(wire.PromptTokens(self._new_id(), prompt), wire.Tokens, None).tokens

    def forget_saved(self) -> None:
        """Never waiting: the worker drops every conversation it keeps for reuse."""
        if self.alive:
            with contextlib.suppress(OSError):  # a dead worker keeps nothing
                self._channel.send(wire.Forget())

    def close(self) -> None:
        """Stop the worker (asked first; killed after ``CLOSE_TIMEOUT_S``) and wait for it."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
        self._quit_watch.set()  # a closing worker frees its model: it answers no pings
        self._ping_due.set()
        if self._ended is None:
            with contextlib.suppress(OSError):  # it is gone already
                self._channel.send(wire.Close())
        try:
            self._process.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning(
                "worker %s did not stop in %g s; killing it", self.model_id, CLOSE_TIMEOUT_S
            )
            self._process.kill()
            self._process.wait()
        self._reader.join()  # it closes the pipes once the worker has gone
        self._watchdog.join()
        self._pinger.join()  # a write it was blocked in failed when the worker ended
        log.info("worker %s (pid %d) stopped", self.model_id, self._process.pid)

    # ------------------------------------------------------------------ plumbing
    def _new_id(self) -> int:
        return next(self._ids)

    def _open(self, request_id: int, deadline: _Deadline | None = None) -> queue.SimpleQueue[Any]:
        answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
        with self._lock:
            if self._ended is not None:
                raise self._ended.error
            if self._closing:
                raise EngineCrashed(
                    f"the model {self.model_id} was unloaded; send the request again",
                    model=self.model_id,
                    how="closed",
                )
            self._pending[request_id] = answers
            if deadline is not None:
                self._deadlines[request_id] = deadline
        return answers

    def _done(self, request_id: int) -> None:
        with self._lock:
            self._pending.pop(request_id, None)
            self._deadlines.pop(request_id, None)
            self._told.discard(request_id)

    def _deadline(self, timeout_s: float | None, what: str) -> _Deadline | None:
        """The watchdog's deadline for a request that may take ``timeout_s`` (None: only
        the heartbeat watches it)."""
        if timeout_s is None:
            return None
        limit = timeout_s + self._grace_s
        return _Deadline(time.monotonic() + limit, f"{what} not done after {limit:g} s, killed")

    def _send(self, message: msgspec.Struct) -> None:
        try:
            self._channel.send(message)
        except OSError:
            self._reader.join(CLOSE_TIMEOUT_S)  # it records how the worker ended
            if self._ended is not None:
                raise self._ended.error from None
            raise

    def _next(
        self,
        answers: queue.SimpleQueue[Any],
        request_id: int,
        cancel: threading.Event | None,
        deadline: float | None = None,
    ) -> Any:
        """The next answer of one request; forwards its cancel event to the worker once
        (looked at before each answer, and every ``CANCEL_POLL_S`` while none comes)."""
        while True:
            if cancel is not None and cancel.is_set() and request_id not in self._told:
                self._told.add(request_id)
                self._tell_cancel(request_id)
            wait = CANCEL_POLL_S if cancel is not None else None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"the worker of {self.model_id} did not answer in time")
                wait = left if wait is None else min(wait, left)
            try:
                answer = answers.get(timeout=wait)
            except queue.Empty:
                continue
            if isinstance(answer, _Ended):
                raise answer.error
            return answer

    def _tell_cancel(self, request_id: int) -> None:
        with contextlib.suppress(OSError):  # the reader ends the request with the crash
            self._channel.send(wire.Cancel(request_id))

    def _call(
        self,
        message: wire.Call,
        reply: type[_Reply],
        cancel: threading.Event | None,
        *,
        timeout: float | None = None,
    ) -> _Reply:
        """Send ``message`` and wait for its answer, a ``reply`` (a fault raised here)."""
        # A call with its own timeout (a counters read) gives up by itself; any other
        # must be answered within the call deadline, or the watchdog kills the worker.
        watched = None if timeout is not None else self._call_timeout_s
        what = f"{type(message).__name__} call"
        answers = self._open(message.id, self._deadline(watched, what))
        try:
            self._send(message)
            deadline = None if timeout is None else time.monotonic() + timeout
            answer = self._next(answers, message.id, cancel, deadline)
        finally:
            self._done(message.id)
        if isinstance(answer, wire.Fault):
            raise error_of(answer)
        assert isinstance(answer, wire.Done)
        if not isinstance(answer.value, reply):  # a bug on one side, never a user's input
            raise wire.WireError(
                f"the worker answered a {what} with {type(answer.value).__name__}, "
                f"not {reply.__name__}",
                message.id,
            )
        return answer.value

    def _stream(
        self,
        message: wire.StreamChat | wire.StreamCompletion | wire.StreamInfill,
        cancel: threading.Event | None,
    ) -> Iterator[Delta]:
        params = message.call.params if isinstance(message, wire.StreamChat) else message.params
        answers = self._open(message.id, self._deadline(params.timeout_s, "stream"))
        finished = False
        try:
            self._send(message)
            while True:
                answer = self._next(answers, message.id, cancel)
                if isinstance(answer, wire.Item):
                    if message.id in self._told and not answer.delta.is_final:
                        # Asked to stop: what the worker made before the message reached
                        # it (a fast model, hundreds of tokens) is not shown, as a cancel
                        # in this process stops within one step. Its usage still counts it.
                        continue
                    yield answer.delta
                    continue
                finished = True
                if isinstance(answer, wire.Fault):
                    raise error_of(answer)
                return
        finally:
            if not finished and self.alive:
                # Stopped early (client gone, consumer closed the stream): the worker
                # frees the slot before the scheduler hands it to the next request.
                if message.id not in self._told:
                    self._tell_cancel(message.id)
                self._drain(answers)
            self._done(message.id)

    def _drain(self, answers: queue.SimpleQueue[Any]) -> None:
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                answer = answers.get(timeout=left)
            except queue.Empty:
                return
            if not isinstance(answer, wire.Item):
                return

    def _watch(self) -> None:
        """The watchdog thread: ping a quiet worker; kill one that missed a deadline."""
        woke = time.monotonic()
        while not self._quit_watch.wait(self._beat_s):
            if self._ended is not None or self._closing:
                self._ping_due.set()  # the pinger sees it and ends too
                return
            now = time.monotonic()
            late = now - woke - self._beat_s
            woke = now
            if late > self._hung_after_s / 2:
                # This process itself did not run (the machine slept, or it was starved):
                # the worker's silence meanwhile says nothing about the worker.
                with self._lock:
                    self._heard = now
                    self._deadlines = {
                        i: replace(d, at=d.at + late) for i, d in self._deadlines.items()
                    }
                continue
            if now - self._heard > self._hung_after_s:
                self._kill(f"no answer in {self._hung_after_s:g} s, killed")
                return
            with self._lock:
                missed = [d for d in self._deadlines.values() if d.at <= now]
            if missed:
                self._kill(missed[0].how)
                return
            if now - self._heard >= self._beat_s / 2:
                self._ping_due.set()

    def _ping(self) -> None:
        """The pinger thread: one ``Ping`` each time the watchdog asks for one."""
        while True:
            self._ping_due.wait()
            self._ping_due.clear()
            if self._quit_watch.is_set() or self._ended is not None:
                return
            try:
                self._channel.send(wire.Ping(next(self._pings)))
            except OSError:
                return  # it is gone: the reader says how

    def _kill(self, how: str) -> None:
        """End a worker that missed its deadline (SIGKILL: a stopped process dies too);
        the reader then ends its requests with ``stopped_error``."""
        with self._lock:
            if self._ended is not None or self._closing or self._killed is not None:
                return
            self._killed = how
        log.warning("worker %s (pid %d): %s", self.model_id, self._process.pid, how)
        with contextlib.suppress(OSError):  # it ended meanwhile
            self._process.kill()

    def _read(self) -> None:
        """The reader thread: hand each answer to its request; at the end, the crash."""
        try:
            while True:
                reply = self._channel.receive()
                if reply is None:
                    break
                self._heard = time.monotonic()
                if isinstance(reply, wire.Item | wire.Done | wire.Fault):
                    with self._lock:
                        answers = self._pending.get(reply.id)
                    if answers is not None:
                        answers.put(reply)
        except OSError as exc:
            log.warning("worker %s: %s", self.model_id, exc)
        except wire.WireError as exc:
            # Nothing after bytes that are no message can be trusted: no waiting for it.
            self._kill(f"sent bytes that are no message ({exc}), killed")
        try:
            code: int | None = self._process.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        tail = log_tail(self.log_path)
        killed = self._killed
        error = (
            crash_error(self.model_id, code, tail, on_load=False)
            if killed is None
            else stopped_error(self.model_id, killed, tail)
        )
        with self._lock:
            self._ended = _Ended(error)
            pending = list(self._pending.values())
        self._ping_due.set()  # the pinger ends
        self._channel.close()  # a dead worker's pipes serve nobody
        if not self._closing:  # a log line, not a warning: the request's error says it
            log.info("worker %s (pid %d) %s", self.model_id, self._process.pid, error.how)
        for answers in pending:
            answers.put(self._ended)
