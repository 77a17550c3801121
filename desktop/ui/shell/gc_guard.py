"""Python's cycle collector runs on the window thread only, never on a worker's.

The collector runs on whichever thread happens to allocate when a threshold is crossed.
If that is a worker (a download, a Hub search, a generation) and the garbage holds a Qt
object (a closed dialog caught in a signal-lambda cycle), Qt deletes it from the wrong
thread and the process dies with a segmentation fault. So automatic collection is
switched off and a timer on the window thread collects, generation by generation, when
the counts pass the usual thresholds (the scheme pyqtgraph's GarbageCollector uses).
Reference counting still frees everything that is not in a cycle at once.

Create, start and stop it on the window thread.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 1000


class GuiThreadCollector(QObject):
    """Collects cyclic garbage from a window-thread timer instead of on any thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self._was_enabled = gc.isenabled()
        self.collections = 0  # for tests: how often the timer collected

    def start(self) -> None:
        """Stop automatic collection (any thread) and collect on this thread's timer."""
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Collect what is left here, then give collection back to Python."""
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()

    def collect_due(self) -> None:
        """Collect the oldest generation whose count passed its threshold, if any."""
        thresholds = gc.get_threshold()
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > thresholds[generation]:
                gc.collect(generation)
                self.collections += 1
                return
