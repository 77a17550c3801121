"""The audit log: who did what, as content-free JSON lines an auditor can check.

One file per UTC day (``audit-YYYY-MM-DD.jsonl``) in a folder IT may choose (policy
``AuditLogPath``). Each line is one event — an API call (key name, endpoint, model,
tokens, status, request id), a key made or revoked, a policy change seen, an export, a
deletion, a data move, an encryption change, a remote-engine call — and never a
prompt, an answer, a document or a title. Each line carries ``prev``, the hash of the
line before it (across days), and ``hash``, the SHA-256 of itself with ``prev``: a line
removed or edited breaks the chain, which ``verify`` finds and names. The chain's head
(the last hash and the line count) is kept in ``audit.head.json``, so lines cut off the
end are found too. A hash chain shows tampering by anyone who does not rewrite every
later line and the head; ship the files to a log server for more.

Appends take a file lock, so the window, ``edgedesk serve`` and commands share one chain.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from desktop.private import private_file

log = logging.getLogger(__name__)
GENESIS = "0" * 64
HEAD_FILE = "audit.head.json"
_NAME = re.compile(r"^audit-(\d{4}-\d{2}-\d{2})\.jsonl$")


def _digest(entry: dict[str, Any]) -> str:
    """The hash of an entry without its own ``hash`` (canonical JSON, prev included)."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Verification:
    """What ``verify`` found: lines checked and each break in the chain, where and why."""

    lines: int = 0
    files: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the whole chain holds."""
        return not self.problems


class AuditLog:
    """Append-only, hash-chained, daily-rotated JSON lines; safe across threads and processes.

    ``record`` is cheap and never raises for a full disk (an audit failure must not fail
    the user's request; it is logged once as a warning); the rest are for the CLI.
    """

    def __init__(self, folder: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.clock = clock
        self._lock = threading.Lock()
        self._file_lock = FileLock(str(folder / "audit.lock"))
        self._warned = False

    def _path(self, when: float) -> Path:
        day = datetime.datetime.fromtimestamp(when, datetime.UTC).date().isoformat()
        return self.folder / f"audit-{day}.jsonl"

    def files(self) -> list[Path]:
        """The day files, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if _NAME.match(p.name))

    def _head(self) -> tuple[str, int]:
        try:
            data = json.loads((self.folder / HEAD_FILE).read_text(encoding="utf-8"))
            return str(data["hash"]), int(data["lines"])
        except (OSError, ValueError, KeyError, TypeError):
            return GENESIS, 0

    def record(self, event: str, **fields: Any) -> None:
        """Append one event (``fields`` must carry no content: names, ids, numbers)."""
        now = self.clock()
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(now, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "event": event,
            **{k: v for k, v in fields.items() if v is not None},
        }
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with self._lock, self._file_lock:
                prev, count = self._head()
                entry["prev"] = prev
                entry["hash"] = _digest(entry)
                path = self._path(now)
                if not path.exists():
                    private_file(path)
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
                    handle.flush()
                head = self.folder / HEAD_FILE
                tmp = head.with_suffix(".tmp")
                private_file(tmp)
                tmp.write_text(
                    json.dumps({"hash": entry["hash"], "lines": count + 1}), encoding="utf-8"
                )
                os.replace(tmp, head)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                log.warning("cannot write the audit log in %s: %s", self.folder, exc)

    def _lines(self) -> Iterator[tuple[Path, int, str]]:
        for path in self.files():
            with path.open(encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    yield path, number, line.rstrip("\n")

    def verify(self) -> Verification:
        """Walk the chain from the first line; every removed, edited or added line is named."""
        result = Verification(files=len(self.files()))
        prev = GENESIS
        with self._file_lock:
            for path, number, line in self._lines():
                where = f"{path.name} line {number}"
                result.lines += 1
                try:
                    entry = json.loads(line)
                except ValueError:
                    result.problems.append(f"{where}: not a JSON line (edited or damaged)")
                    prev = ""
                    continue
                if not isinstance(entry, dict):
                    result.problems.append(f"{where}: not an audit entry")
                    continue
                if entry.get("hash") != _digest(entry):
                    result.problems.append(
                        f"{where}: its content does not match its hash (the line was edited)"
                    )
                elif prev and entry.get("prev") != prev:
                    result.problems.append(
                        f"{where}: does not follow the line before it "
                        "(a line before it was removed or inserted)"
                    )
                prev = str(entry.get("hash", ""))
            head, count = self._head()
        # The end: cut-off last lines leave no break inside the chain, only a short one.
        if count and (head != prev or (count != result.lines and not result.problems)):
            result.problems.append(
                f"the log ends after {result.lines} lines but {count} were written (last "
                "lines removed, or the head file was changed)"
            )
        return result

    def entries(self, since: float | None = None) -> list[dict[str, Any]]:
        """The events (without their hashes), oldest first; ``since`` a Unix time."""
        found = []
        for _path, _number, line in self._lines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if since is not None:
                try:
                    when = datetime.datetime.fromisoformat(str(entry.get("time"))).timestamp()
                except ValueError:
                    continue
                if when < since:
                    continue
            found.append({k: v for k, v in entry.items() if k not in ("hash", "prev")})
        return found


class NoAudit:
    """The audit log when it is off: every event is dropped."""

    def record(self, event: str, **fields: Any) -> None:
        """Drop the event."""


Auditor = AuditLog | NoAudit
