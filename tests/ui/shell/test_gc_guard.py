"""Cyclic garbage is collected on the window thread, never by whichever thread allocates."""

from __future__ import annotations

import gc
import threading
import weakref

from desktop.ui.shell.gc_guard import GuiThreadCollector


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_worker_thread_never_collects_and_the_window_thread_does(qapp) -> None:
    before = gc.isenabled()
    collector = GuiThreadCollector()
    collector.start()
    try:
        garbage = _Node()
        watch = weakref.ref(garbage)
        del garbage

        def allocate() -> None:  # far past every threshold: automatic gc would run here
            for _ in range(50_000):
                _Node()

        worker = threading.Thread(target=allocate)
        worker.start()
        worker.join()
        assert watch() is not None  # the worker thread collected nothing
        for _ in range(3):
            collector.collect_due()
        assert watch() is None and collector.collections >= 1
    finally:
        collector.stop()
    assert gc.isenabled() == before  # handed back as it was found
