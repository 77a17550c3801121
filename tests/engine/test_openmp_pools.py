"""llama.cpp work outside an engine's decode loop leaves no OpenMP pool behind.

libgomp keeps a pool of worker threads for every thread that has run a parallel region,
for as long as that thread lives, and while it manages more threads than the process may
use cores it cuts its spin at ggml's per-operation barriers to 100: every token then
waits on futex wake-ups (the Moonlight-16B-A3B shape on 2 cores: 78-80 against 64 ms a
token). The load's warm-up decode and the vision projector's warm-up encode ran on the
loading thread, which in-process (a server's request thread) lives on; now each runs on
a thread that ends with it, and the decode loop's pool is the only one.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions, on_a_passing_thread
from desktop.engine._types import GenerationParams
from tests.conftest import wait_until

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="counts the threads in /proc/self/task"
)


def _threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def test_a_model_loaded_on_a_thread_that_lives_on_leaves_it_no_pool(tiny_chat: Path) -> None:
    built: list[LlamaEngine] = []
    loaded, finish = threading.Event(), threading.Event()

    def loader() -> None:  # as a server's request thread: it loads, then lives on
        built.append(LlamaEngine(tiny_chat, LoadOptions(context_length=256, threads=2)))
        loaded.set()
        finish.wait()

    before = _threads()
    thread = threading.Thread(target=loader, name="request")
    thread.start()
    try:
        assert loaded.wait(60)
        engine = built[0]
        answer = engine.stream_completion("hello", GenerationParams(max_tokens=4, temperature=0))
        assert list(answer)
        # New since the start: the loader, the decode loop and the one worker of the
        # loop's pool (2 threads: the loop's own and one more); a pool kept by the loader
        # would add its worker. (A set, so a thread of another test ending meanwhile
        # changes nothing.)
        wait_until(lambda: len(_threads() - before) == 3, 10, "the warm-up's pool gone")
        assert len(_threads() - before) == 3
    finally:
        finish.set()
        thread.join()
        for engine in built:
            engine.close()


def test_work_on_a_passing_thread_returns_its_result_or_raises_its_error() -> None:
    assert on_a_passing_thread(lambda: threading.current_thread().name, "passing") == "passing"
    with pytest.raises(ZeroDivisionError):
        on_a_passing_thread(lambda: 1 // 0, "passing")
