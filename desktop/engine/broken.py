"""Models that crashed their worker on every load, remembered in one small JSON file.

The scheduler marks a model after ``scheduler.CRASHES_TO_BROKEN`` crashed loads in a
row and refuses it until the user retries (``edgedesk models retry``, the Models page);
``models info`` and the window, in other processes, read the same file.

Threads: any thread; each call reads or replaces the whole file (atomically), so two
processes never see half of it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


class BrokenFile:
    """``scheduler.BrokenModels`` kept in ``path`` (model id -> reason and when)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # none yet, or damaged: no model is held back by a bad file
        return (
            {str(k): v for k, v in data.items() if isinstance(v, dict)}
            if isinstance(data, dict)
            else {}
        )

    def _write(self, data: dict[str, dict[str, object]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        staged = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        staged.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(staged, self.path)

    def reason(self, model_id: str) -> str | None:
        """Why ``model_id`` is marked broken, or None."""
        entry = self._read().get(model_id)
        return None if entry is None else str(entry.get("reason") or "it crashed")

    def mark(self, model_id: str, reason: str) -> None:
        """Remember ``model_id`` as broken for ``reason``."""
        data = self._read()
        data[model_id] = {"reason": reason, "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write(data)

    def clear(self, model_id: str) -> bool:
        """Forget the mark; True if there was one."""
        data = self._read()
        if data.pop(model_id, None) is None:
            return False
        self._write(data)
        return True

    def marked(self) -> dict[str, str]:
        """Every broken model with its reason."""
        return {k: str(v.get("reason") or "it crashed") for k, v in self._read().items()}
