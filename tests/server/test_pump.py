"""The SSE pump: generation runs ahead of the network and bursts go out in one write."""

from __future__ import annotations

import asyncio
import threading

import pytest

from desktop.server.routes import _Pump


def test_producer_runs_ahead_of_a_slow_consumer_and_writes_are_batched() -> None:
    produced: list[int] = []

    def events():
        for i in range(50):
            produced.append(i)
            yield f"data: {i}\n\n".encode()

    pump = _Pump(events())

    async def consume() -> list[bytes]:
        writes = []
        async for chunk in pump:
            writes.append(chunk)
            await asyncio.sleep(0.02)  # a slow client / network
        return writes

    writes = asyncio.run(consume())
    assert b"".join(writes) == b"".join(f"data: {i}\n\n".encode() for i in range(50))
    assert len(writes) < 50  # bursts were coalesced, not one write per event
    pump.close()


def test_close_waits_for_the_producer_then_closes_the_generator() -> None:
    cancel = threading.Event()
    closed = threading.Event()

    def events():
        try:
            while not cancel.is_set():
                yield b"x"
        finally:
            closed.set()

    pump = _Pump(events())

    async def read_one_then_leave() -> bytes:
        async for chunk in pump:
            cancel.set()  # what the EventStream does when the client disconnects
            await asyncio.to_thread(pump.close)  # as the EventStream does, off the loop
            return chunk
        return b""

    assert asyncio.run(read_one_then_leave()).startswith(b"x")
    assert closed.is_set()


def test_errors_in_the_producer_reach_the_consumer() -> None:
    def events():
        yield b"a"
        raise RuntimeError("engine failed")

    async def consume() -> None:
        async for _chunk in _Pump(events()):
            pass

    with pytest.raises(RuntimeError, match="engine failed"):
        asyncio.run(consume())
