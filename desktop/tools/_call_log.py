"""The content-free log of tool calls: which tool, which server, how long, ok or not.

Arguments and results never reach it (they may be private); the user reads it with
``edgedesk tools log`` and IT collects it with the other logs.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

LOG_NAME = "tools.jsonl"


@dataclass(frozen=True)
class ToolCallRecord:
    """One call as the audit log keeps it (no arguments, no result)."""

    time: float
    tool: str
    server: str
    duration_ms: float
    ok: bool
    error: str = ""  # the kind of failure ("timeout", "crashed", "refused", "denied"...)


class ToolAudit:
    """Appends one JSON line per tool call; any thread (one lock)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path  # None: keep nothing (tests of other things)
        self._lock = threading.Lock()

    def write(self, record: ToolCallRecord) -> None:
        """Log one call; a full disk never fails the call."""
        if self.path is None:
            return
        line = json.dumps(asdict(record), ensure_ascii=False)
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line + "\n")
            except OSError:
                pass

    def entries(self) -> list[ToolCallRecord]:
        """The logged calls, oldest first (lines a crash cut short are skipped)."""
        if self.path is None or not self.path.exists():
            return []
        found = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                found.append(ToolCallRecord(**json.loads(line)))
            except (ValueError, TypeError):
                continue
        return found


def now() -> float:
    """Wall-clock time for records."""
    return time.time()
