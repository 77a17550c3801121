"""Line up requests on a real engine's decode loop, and see what each step carried."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from desktop.engine._batching.loop import Step
from desktop.engine._llama import LlamaEngine
from tests.conftest import wait_until


class LoopGate:
    """Step observer that records steps and can hold the decode loop until released."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self._hold = False
        self._open = threading.Event()
        self.held = threading.Event()  # the loop is waiting inside the callback

    def __call__(self, step: Step) -> None:
        self.steps.append(step)
        if self._hold:
            self.held.set()
            self._open.wait()

    def hold(self) -> None:
        """Hold the loop after its next decode."""
        self._open.clear()
        self.held.clear()
        self._hold = True

    def release(self) -> None:
        """Let the loop run freely again."""
        self._hold = False
        self._open.set()


def wait_for(condition: Callable[[], bool]) -> None:
    """Wait until ``condition`` holds (it is state the engine reports, not a clock)."""
    wait_until(condition, 20, "the engine state")


def together(engine: LlamaEngine, gate: LoopGate, jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run ``jobs`` on their own threads, all admitted before the loop goes on."""
    results: list[Any | None] = [None] * len(jobs)

    def work(i: int) -> None:
        results[i] = jobs[i]()

    gate.hold()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    try:
        wait_for(
            lambda: (
                gate.held.is_set()
                and (s := engine.stats()).slots_busy + s.requests_waiting == len(jobs)
            )
        )
    finally:
        gate.release()
    for thread in threads:
        thread.join()
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]
