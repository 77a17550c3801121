"""The "Always for this tool" answers, kept across restarts: one entry per tool server and
tool, in ``tool-approvals.json`` in the config folder.

Policy ``McpRequireApproval`` makes every call ask, so then nothing is remembered or
honoured (the file is left alone: it counts again if IT lifts the policy). A damaged
file means nothing is remembered (every call asks) until an answer rewrites it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

APPROVALS_FILE = "tool-approvals.json"


class Approvals:
    """Tools the user said may always run without asking, by (server, tool).

    Threads: any; reads and writes are serialized (a chat's worker answers, the CLI or
    the Tools page lists and forgets).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> set[tuple[str, str]]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()  # none yet, or damaged: ask again rather than guess
        always = raw.get("always", []) if isinstance(raw, dict) else []
        return {
            (str(e["server"]), str(e["tool"]))
            for e in always
            if isinstance(e, dict) and "server" in e and "tool" in e
        }

    def _write(self, found: set[tuple[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        body = {"always": [{"server": s, "tool": t} for s, t in sorted(found)]}
        tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.path)

    def all(self) -> list[tuple[str, str]]:
        """Every remembered (server, tool), sorted."""
        with self._lock:
            return sorted(self._read())

    def has(self, server: str, tool: str) -> bool:
        """Whether ``tool`` of ``server`` may run without asking."""
        with self._lock:
            return (server, tool) in self._read()

    def add(self, server: str, tool: str) -> None:
        """Remember an "Always for this tool" answer."""
        with self._lock:
            found = self._read()
            if (server, tool) not in found:
                self._write(found | {(server, tool)})

    def forget(self, server: str, tool: str | None = None) -> int:
        """Ask again for ``tool`` of ``server`` (every tool of it when None); how many
        answers were forgotten."""
        with self._lock:
            found = self._read()
            gone = {e for e in found if e[0] == server and (tool is None or e[1] == tool)}
            if gone:
                self._write(found - gone)
            return len(gone)
