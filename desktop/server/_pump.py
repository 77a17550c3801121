"""Moving the scheduler's blocking chunk iterators onto the event loop, and back out.

A streamed answer is produced on its own thread (``Pump``), which pulls the engine's
chunks, turns them into SSE bytes and queues them; the event loop sends whatever piled
up in one write. The route waits for the pump's first output before it answers, so
queue-full, unknown model and context overflow still get their own status. That first
output is the protocol's opening, made as soon as the engine says the request is
admitted (``engine._types.ADMITTED``: before the prompt is read, which can take minutes),
so the status, headers and opening event go out at once rather than with the first
token. When the client goes away the request's cancel event is set: the engine stops
within one token and the scheduler's gate is released by closing the iterator.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any, TypeVar

import anyio
from fastapi import Request
from fastapi.responses import StreamingResponse

from desktop.engine import Delta
from desktop.server._services import RequestInfo

T = TypeVar("T")
# What a quiet stream sends to show it is alive: fixed bytes, or bytes made on the event
# loop when needed (b"": nothing this time).
Keepalive = bytes | Callable[[], bytes]
# At most ~200 writes a second: a token that comes sooner after the last write waits for
# the next one. Only models faster than 200 tok/s ever wait (by < 5 ms, less than a
# display frame), and each write costs the event loop CPU that the engine then lacks
# (tiny model on 2 cores: ~50 instead of ~210 writes per 256 tokens; figures in
# docs/benchmarks.md). The first write is never held.
WRITE_GAP_S = 0.005
# A started stream quiet this long (its prompt being read, for minutes with an agent's
# prompt) sends its wire's keepalive (Anthropic's ``ping``), as Anthropic's API does: a
# relay or client that gives up on an idle connection keeps it.
KEEPALIVE_S = 10.0
FIRST_HANDOFF_S = 0.05  # the most the producer waits for the loop to take an early event
# Events handed straight to the loop: the opening (sent at admission) and the first words.
FIRST_HANDOFFS = 2


def close_stream(stream: object) -> None:
    """Close a generator so its ``finally`` (the scheduler's gate) runs now."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()


async def watch_disconnect(
    request: Request, cancel: threading.Event, work: Callable[[], Awaitable[T]]
) -> T:
    """Run ``work``; if the client disconnects meanwhile, set ``cancel``."""
    result: list[T] = []

    async def watch() -> None:
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                cancel.set()
                return

    failure: list[BaseException] = []
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            result.append(await work())
        except Exception as exc:  # re-raised bare below, not wrapped in an ExceptionGroup
            failure.append(exc)
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return result[0]


class TimedStream:
    """A request's engine chunks up to the final one, pulled on the caller's thread.

    Notes the time to the first chunk of words (``ADMITTED`` is passed on but not
    timed); at the end (or when abandoned) it closes the stream, which frees the
    scheduler's gate, and records the token counts.
    """

    def __init__(self, stream: Iterator[Delta], info: RequestInfo) -> None:
        self._stream = stream
        self._info = info
        self.final = Delta(finish_reason="stop")  # the engine always sends one; be safe

    def __iter__(self) -> Iterator[Delta]:
        """Each chunk; the final one (``is_final``) is the last."""
        try:
            for chunk in self._stream:
                if chunk.admitted:
                    yield chunk
                    continue
                if self._info.ttft_s is None:
                    self._info.ttft_s = time.perf_counter() - self._info.started
                self.final = chunk
                yield chunk
                if chunk.is_final:
                    return
        finally:
            close_stream(self._stream)
            if self.final.usage is not None:
                usage = self.final.usage
                self._info.tokens_in, self._info.tokens_out = (
                    usage.prompt_tokens,
                    usage.completion_tokens,
                )
                self._info.tokens_cached = usage.cached_tokens


class Pump:
    """Runs a blocking event generator on its own thread, ahead of the network.

    The engine never waits for the event loop: each event is queued as soon as it is
    made, and whatever piled up while the previous write went out is sent in one write.
    (Pulling one event per thread hop made generation pause for every send: ~0.8 ms a
    token, half the speed of the tiny test model and ~5% of a real one.) The loop is
    woken once per batch, not once per event, and writes are at least ``min_gap_s``
    apart.

    The thread is the stream's own, not one of a shared pool: it spends most of a queued
    request's life waiting for the scheduler's gate, and a pool (asyncio's default one
    has cpu + 4 threads) filled with such waits kept later requests from even reaching
    the scheduler, so they hung instead of getting ``429 queue full``. Their number is
    bounded by the scheduler, which refuses requests beyond its queue at once.
    """

    _END = object()

    def __init__(
        self,
        events: Generator[bytes, None, None],
        min_gap_s: float = WRITE_GAP_S,
        keepalive: Keepalive = b"",
    ) -> None:
        self._events = events
        self.min_gap_s = min_gap_s  # least time between writes; events meanwhile share one
        # Sent after KEEPALIVE_S quiet once started; b"": never. A callable is asked on
        # the loop each time and may answer b"" (nothing to send this time).
        self.keepalive = keepalive
        self.keepalive_s = KEEPALIVE_S
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._started = False
        self._wake_pending = False  # a wake-up is on its way to the loop
        self._taken = threading.Event()  # the loop took a batch since the producer cleared it
        self._done = False
        self._ready: asyncio.Event | None = None
        self._ended: asyncio.Event | None = None  # set on the loop once the producer ended
        self._error: BaseException | None = None  # raised once the events before it are sent
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_write = -math.inf

    def _wake(self) -> None:
        # Set False by the consumer *before* it drains, so an event queued after a
        # skipped wake-up is always picked up by the drain that follows.
        if not self._wake_pending:
            self._wake_pending = True
            assert self._ready is not None
            self._on_loop(self._ready.set)

    def _on_loop(self, callback: Callable[[], object]) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop may already be closed
            self._loop.call_soon_threadsafe(callback)

    def _produce(self) -> None:
        try:
            handoffs = FIRST_HANDOFFS
            for item in self._events:
                self._queue.put(item)
                self._wake()
                if handoffs:
                    # Let the loop take the opening, then the first words, before the
                    # engine's Python holds the GIL again: otherwise the loop can wait
                    # ~1-5 ms (the GIL's switch interval) to send them. Bounded, in case
                    # the loop is busy elsewhere.
                    handoffs -= 1
                    self._taken.wait(FIRST_HANDOFF_S)
                    self._taken.clear()
        except BaseException as exc:  # handed to the consumer, raised there
            self._queue.put(exc)
        finally:
            self._queue.put(self._END)
            self._wake()
            assert self._ended is not None
            self._on_loop(self._ended.set)

    async def _batch(self, *, started: bool = False) -> bytes | None:
        """The next bytes to send (None at the end); then raises what the producer raised.

        ``started``: the opening went out, so a quiet spell may be filled by a keepalive.
        """
        assert self._ready is not None
        while not self._done:
            if started and self.keepalive and not self._ready.is_set():
                # A timer only when nothing is waiting: not one per write while tokens flow.
                try:
                    async with asyncio.timeout(self.keepalive_s):
                        await self._ready.wait()
                except TimeoutError:
                    keep = self.keepalive() if callable(self.keepalive) else self.keepalive
                    if keep:
                        return keep
                    continue
            else:
                await self._ready.wait()
            assert self._loop is not None
            wait = self._last_write + self.min_gap_s - self._loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._ready.clear()  # before draining: a put after this wakes the next wait
            self._wake_pending = False
            batch: list[bytes] = []
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is self._END:
                    self._done = True
                    break
                if isinstance(item, BaseException):
                    # The events made before the failure still go out first.
                    self._done, self._error = True, item
                    break
                batch.append(item)  # type: ignore[arg-type]
            if batch:
                self._taken.set()
                self._last_write = self._loop.time()
                return b"".join(batch)
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return None

    async def start(self) -> bytes | None:
        """Start the producer and wait for its first output (None: it made none; ``b""``:
        it opened the answer with no bytes yet, as a stream whose opening is empty)."""
        self._loop = asyncio.get_running_loop()
        self._ready = asyncio.Event()
        self._ended = asyncio.Event()
        self._started = True
        # _produce never raises (it queues its exception) and always ends once the caller
        # sets cancel; daemon so that a stream stuck in a model cannot hold up exit.
        threading.Thread(target=self._produce, name="edgedesk-stream", daemon=True).start()
        return await self._batch()

    async def rest(self, first: bytes | None) -> AsyncIterator[bytes]:
        """``first``, then everything the producer makes until it ends."""
        if first:
            yield first
        while (batch := await self._batch(started=True)) is not None:
            yield batch

    async def aclose(self) -> None:
        """Free the engine: wait for the producer (the caller set cancel), then close.

        A stream still queued for the gate ends only once its turn comes (then at once,
        as cancel is set); waiting here rather than on a worker thread keeps many such
        disconnects from using up the threads other requests need.
        """
        if self._started:
            assert self._ended is not None
            await self._ended.wait()
        self._events.close()  # the producer ran it to its end; this frees a never-started one


class EventStream(StreamingResponse):
    """A stream (SSE or NDJSON) that cancels generation when the client leaves and always
    frees the engine."""

    def __init__(
        self,
        pump: Pump,
        first: bytes | None,
        cancel: threading.Event,
        media_type: str = "text/event-stream",
    ) -> None:
        super().__init__(
            pump.rest(first),
            media_type=media_type,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._cancel = cancel
        self._pump = pump

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Stream until done or disconnected; then wait until the engine stream ended."""

        async def watch() -> None:
            await self.listen_for_disconnect(receive)
            self._cancel.set()
            group.cancel_scope.cancel()

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                try:
                    await self.stream_response(send)
                except OSError:
                    self._cancel.set()
                group.cancel_scope.cancel()
        finally:
            self._cancel.set()  # a finished stream ignores it; any early exit stops the engine
            with anyio.CancelScope(shield=True):
                # The response ends only after the engine is free: server shutdown waits
                # for responses, and unloads models only after that.
                await self._pump.aclose()


async def start_stream(
    request: Request,
    events: Generator[bytes, None, None],
    cancel: threading.Event,
    *,
    media_type: str = "text/event-stream",
    keepalive: Keepalive = b"",
) -> EventStream:
    """The streamed response once ``events`` made its first output (the opening, maybe
    empty); errors before it raise here, so they keep their own status."""
    pump = Pump(events, keepalive=keepalive)
    try:
        first = await watch_disconnect(request, cancel, pump.start)
    except BaseException:
        cancel.set()
        with anyio.CancelScope(shield=True):
            await pump.aclose()
        raise
    return EventStream(pump, first, cancel, media_type)
