"""``UsageRecorder``: usage rows written off the request path, in batches, by one thread.

A request only puts its row on a queue (no lock held, no I/O); a writer thread gathers
rows for up to ``LINGER_S`` and inserts them in one transaction, so a burst of requests
costs one commit rather than one each, and neither the event loop nor the engine ever
waits on the disk. Listeners (the window's Usage tab) hear of each batch once it is stored.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from desktop.base.errors import EdgeDeskError
from desktop.store._usage import UsageRow, UsageStore

log = logging.getLogger("edgedesk.usage")
BATCH = 512  # rows per transaction at most
# After the first row of a batch, rows are gathered this long before one write: under load
# that is one short transaction a second, not one per request competing for the CPU.
LINGER_S = 1.0
Listener = Callable[[list[UsageRow]], None]


class UsageRecorder:
    """Queues usage rows and writes them on its own thread.

    ``record`` may be called from any thread, at any rate: it never blocks and never
    raises. ``flush`` (any thread but the writer's) waits until what was recorded before
    it is stored. ``close`` (the owner's thread) writes what is left and ends the thread.
    Listeners are called on the writer thread.
    """

    def __init__(self, store: UsageStore) -> None:
        self.store = store
        self._queue: queue.SimpleQueue[UsageRow | threading.Event | None] = queue.SimpleQueue()
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="edgedesk-usage", daemon=True)
        self._thread.start()

    def record(self, row: UsageRow) -> None:
        """Queue one row (never blocks; dropped once the recorder is closed)."""
        if not self._closed:
            self._queue.put(row)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with each stored batch; returns an unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every row recorded so far is stored; False on timeout or closed."""
        if self._closed:
            return False
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout_s)

    def close(self) -> None:
        """Store what is queued and end the writer thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            deadline = time.monotonic() + LINGER_S
            batch: list[UsageRow] = []
            waiters: list[threading.Event] = []
            stop = False
            while True:
                if item is None:
                    stop = True
                elif isinstance(item, threading.Event):
                    waiters.append(item)
                else:
                    batch.append(item)
                # A flush or close writes at once; otherwise gather until the deadline.
                if stop or waiters or len(batch) >= BATCH:
                    break
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
            self._write(batch)
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    def _write(self, batch: list[UsageRow]) -> None:
        if not batch:
            return
        try:
            self.store.add(batch)
        except (EdgeDeskError, OSError, ValueError) as exc:
            log.warning("cannot store %d usage rows: %s", len(batch), exc)
            return
        except Exception:  # a locked or closed database must not end the writer
            log.exception("cannot store %d usage rows", len(batch))
            return
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(batch)
            except Exception:  # a broken listener must not stop the recording
                log.exception("usage listener failed")
