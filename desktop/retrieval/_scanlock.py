"""One indexing of a collection at a time, across every process on a data folder.

The window's Documents screen, ``edgedesk docs add`` in a terminal and the server's
hourly rescan may all scan the same collection; two at once would both insert the same
new files. A file lock per collection in the data folder serialises them: the second
waits (its caller says so) and then finds the work done.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from desktop.base.errors import Cancelled

POLL_S = 0.2  # how often a scan waiting for the lock checks its cancel event


@contextmanager
def collection_lock(
    lock_dir: Path, name: str, *, on_wait: Callable[[], None], cancel: threading.Event | None = None
) -> Iterator[None]:
    """Hold collection ``name``'s lock; ``on_wait`` is called once if it must wait.

    Raises Cancelled if ``cancel`` is set while waiting.
    """
    lock_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    lock = FileLock(str(lock_dir / f"collection-{digest}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        on_wait()
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled(
                    f"stopped while waiting for the other indexing of '{name}' to finish"
                ) from None
            try:
                lock.acquire(timeout=POLL_S)
                break
            except Timeout:
                continue
    try:
        yield
    finally:
        lock.release()
