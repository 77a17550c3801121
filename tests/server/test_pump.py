"""The SSE pump: generation runs ahead of the network and bursts go out in one write."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from desktop.server._pump import Pump


async def _all(pump: Pump, delay_s: float = 0.0) -> list[bytes]:
    writes = []
    try:
        async for chunk in pump.rest(await pump.start()):
            writes.append(chunk)
            await asyncio.sleep(delay_s)  # a slow client / network
    finally:
        await pump.aclose()  # on the loop that ran it, as the EventStream does
    return writes


def test_producer_runs_ahead_of_a_slow_consumer_and_writes_are_batched() -> None:
    produced: list[int] = []

    def events():
        for i in range(50):
            produced.append(i)
            yield f"data: {i}\n\n".encode()

    pump = Pump(events())
    writes = asyncio.run(_all(pump, 0.02))
    assert b"".join(writes) == b"".join(f"data: {i}\n\n".encode() for i in range(50))
    assert len(writes) < 50  # bursts were coalesced, not one write per event


def test_every_event_arrives_when_producer_and_consumer_race() -> None:
    # No sleeps: wake-ups skipped while one is pending must never strand an event.
    for _ in range(20):
        pump = Pump((f"{i},".encode() for i in range(2000)), min_gap_s=0)
        assert b"".join(asyncio.run(_all(pump))) == b"".join(f"{i},".encode() for i in range(2000))


def test_writes_are_spaced_but_the_first_is_not_held() -> None:
    # A gap far longer than any scheduling delay on a loaded machine: a held first write
    # would wait all of it, an unheld one waits for one event.
    gap = 2.0

    def events():
        for i in range(100):
            time.sleep(0.001)  # a model far faster than any reader: up to 1,000 tok/s
            yield f"{i},".encode()

    pump = Pump(events(), min_gap_s=gap)

    async def consume() -> tuple[float, float, list[bytes]]:
        started = time.perf_counter()
        first = await pump.start()
        waited = time.perf_counter() - started
        rest = [w async for w in pump.rest(None)]
        elapsed = time.perf_counter() - started
        await pump.aclose()
        return waited, elapsed, [first or b"", *rest]

    waited, elapsed, writes = asyncio.run(consume())
    assert waited < gap and writes[0].startswith(b"0,")  # the first write is not held
    assert b"".join(writes) == b"".join(f"{i},".encode() for i in range(100))
    assert len(writes) <= elapsed / gap + 2  # each later write waited out the gap


def test_aclose_waits_for_the_producer_then_closes_the_generator() -> None:
    cancel = threading.Event()
    closed = threading.Event()

    def events():
        try:
            while not cancel.is_set():
                yield b"x"
        finally:
            closed.set()

    pump = Pump(events())

    async def read_one_then_leave() -> bytes:
        first = await pump.start()
        cancel.set()  # what the EventStream does when the client disconnects
        await pump.aclose()  # as the EventStream does, on the loop, holding no thread
        return first or b""

    assert asyncio.run(read_one_then_leave()).startswith(b"x")
    assert closed.is_set()


def test_errors_before_the_first_event_raise_from_start() -> None:
    def events():
        raise RuntimeError("queue full")
        yield b"never"

    pump = Pump(events())

    async def start_then_close() -> None:
        try:
            await pump.start()
        finally:
            await pump.aclose()

    with pytest.raises(RuntimeError, match="queue full"):
        asyncio.run(start_then_close())


def test_errors_in_the_producer_reach_the_consumer() -> None:
    def events():
        yield b"a"
        raise RuntimeError("engine failed")

    with pytest.raises(RuntimeError, match="engine failed"):
        asyncio.run(_all(Pump(events())))


def test_a_producer_that_makes_nothing_ends_the_stream() -> None:
    assert asyncio.run(_all(Pump(b"" for _ in ()))) == []


def test_events_made_before_an_error_are_sent_before_it() -> None:
    def events():
        yield b"a"
        yield b"b"  # piles up with the error while the first write's gap runs
        raise RuntimeError("engine failed")

    pump = Pump(events(), min_gap_s=0.2)
    writes: list[bytes] = []

    async def consume() -> None:
        try:
            async for chunk in pump.rest(await pump.start()):
                writes.append(chunk)
        finally:
            await pump.aclose()

    with pytest.raises(RuntimeError, match="engine failed"):
        asyncio.run(consume())
    assert b"".join(writes) == b"ab"


def _no_pool(loop: asyncio.AbstractEventLoop) -> None:
    """Make any use of the loop's default executor fail."""
    pool = ThreadPoolExecutor(1)
    pool.shutdown()
    loop.set_default_executor(pool)


def test_waiting_streams_hold_no_pool_thread_and_their_threads_end() -> None:
    # Like streams queued for the scheduler's gate: more of them than any shared pool.
    gate = threading.Event()
    cancel = threading.Event()
    closed: list[int] = []

    def events(i: int):
        try:
            gate.wait()
            yield f"{i}".encode()
            while not cancel.is_set():  # the engine stops once the client has gone
                yield b"."
                time.sleep(0.001)
        finally:
            closed.append(i)

    async def main() -> list[bytes]:
        _no_pool(asyncio.get_running_loop())
        pumps = [Pump(events(i)) for i in range(40)]
        starts = [asyncio.ensure_future(p.start()) for p in pumps]
        await asyncio.sleep(0.1)
        assert not any(s.done() for s in starts)  # all still waiting for their turn
        gate.set()
        firsts = [await s for s in starts]
        cancel.set()  # every client leaves after its first event
        await asyncio.wait_for(asyncio.gather(*(p.aclose() for p in pumps)), 10)
        return [f or b"" for f in firsts]

    def streams() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name == "edgedesk-stream"}

    before = streams()
    firsts = asyncio.run(main())
    assert [f.rstrip(b".") for f in firsts] == [f"{i}".encode() for i in range(40)]
    assert sorted(closed) == list(range(40))
    for thread in streams() - before:  # each ends right after it said so
        thread.join(5)
    assert not streams() - before
