"""Models whose worker crashed on their last loads, remembered for every process.

The scheduler counts each load that crashed its worker (``crashed``) and, after
``_scheduler.CRASHES_TO_BROKEN`` in a row, refuses the model until the user retries it
(``edgedesk models retry``, the Models page); a load that works resets the count. The
file is shared by the window, ``edgedesk serve`` and one-shot commands such as
``edgedesk run``, so three crashed runs count as three.

Threads: any thread; each call reads or replaces the whole file (atomically, under a
lock for this process), so no process sees half of it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import TypedDict


class _Entry(TypedDict):
    crashes: int
    reason: str
    broken: bool
    since: str


class BrokenFile:
    """``_scheduler.BrokenModels`` kept in ``path`` (model id -> crashes in a row, why)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path  # None: kept in memory only (tests, a scheduler of its own)
        self._memory: dict[str, _Entry] = {}  # the entries (or the file's, as last read)
        self._stamp: tuple[int, int, int] | None = None  # the file's version they are of
        self._lock = threading.Lock()

    def _read(self) -> dict[str, _Entry]:
        if self.path is None:
            return dict(self._memory)
        try:
            seen = self.path.stat()
        except OSError:
            return {}  # none yet: every request asks, so this is the cheap common case
        stamp = (seen.st_mtime_ns, seen.st_size, seen.st_ino)
        if stamp == self._stamp:
            return dict(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # damaged: no model is held back by a bad file
        entries: dict[str, _Entry] = {}
        if not isinstance(data, dict):
            return entries
        for key, value in data.items():
            crashes = value.get("crashes") if isinstance(value, dict) else None
            if type(crashes) is not int:
                continue  # an entry another program mangled holds no model back
            entries[str(key)] = _Entry(
                crashes=crashes,
                reason=str(value.get("reason") or "it crashed"),
                broken=value.get("broken") is True,
                since=str(value.get("since") or ""),
            )
        self._memory, self._stamp = entries, stamp
        return dict(entries)

    def _write(self, data: dict[str, _Entry]) -> None:
        if self.path is None:
            self._memory = data
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        staged = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        staged.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(staged, self.path)

    def reason(self, model_id: str) -> str | None:
        """Why ``model_id`` is marked broken, or None when it may load."""
        entry = self._read().get(model_id)
        return entry["reason"] if entry is not None and entry["broken"] else None

    def crashed(self, model_id: str, reason: str, *, threshold: int) -> int:
        """Count one more crashed load of ``model_id`` (marked broken at ``threshold``);
        returns the crashes in a row."""
        with self._lock:
            data = self._read()
            crashes = data[model_id]["crashes"] + 1 if model_id in data else 1
            data[model_id] = _Entry(
                crashes=crashes,
                reason=reason,
                broken=crashes >= threshold,
                since=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            )
            self._write(data)
        return crashes

    def loaded(self, model_id: str) -> None:
        """A load worked: its crashes no longer count (no write when there were none)."""
        with self._lock:
            data = self._read()
            if data.pop(model_id, None) is not None:
                self._write(data)

    def clear(self, model_id: str) -> bool:
        """Try ``model_id`` again; True if it was marked broken."""
        with self._lock:
            data = self._read()
            entry = data.pop(model_id, None)
            if entry is not None:
                self._write(data)
        return entry is not None and entry["broken"]

    def marked(self) -> dict[str, str]:
        """Every model marked broken, with its reason."""
        return {k: v["reason"] for k, v in self._read().items() if v["broken"]}
