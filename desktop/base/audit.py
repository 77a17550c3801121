"""The audit log: who did what, as content-free JSON lines an auditor can check.

One file per UTC day (``audit-YYYY-MM-DD.jsonl``) in a folder IT may choose (policy
``AuditLogPath``). Each line is one event — an API call (key name, endpoint, model,
tokens, status, request id), a key made or revoked, a policy change seen, an export, a
deletion, a data move, an encryption change, a remote-engine call — and never a
prompt, an answer, a document or a title. Each line carries ``prev``, the hash of the
line before it (across days), and ``hash``, the SHA-256 of itself with ``prev``: a line
removed or edited breaks the chain, which ``verify`` finds and names. The chain's head
(the last hash and the line count) is kept in ``audit.head.json``, so lines cut off the
end are found too, and anchored outside the folder (``KeyringAnchor``: the OS keyring),
so a deleted or rewritten head, or the whole folder deleted, is found as well. While
auditing is on, a missing log or head is "broken". A hash chain shows tampering by
anyone who cannot also rewrite the anchor; ship the files to a log server for more.

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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock

from desktop.base.errors import ConfigError
from desktop.base.keychain import Keychain
from desktop.base.private import private_file

log = logging.getLogger(__name__)
GENESIS = "0" * 64
HEAD_FILE = "audit.head.json"
_NAME = re.compile(r"^audit-(\d{4}-\d{2}-\d{2})\.jsonl$")


def _digest(entry: Mapping[str, object]) -> str:
    """The hash of an entry without its own ``hash`` (canonical JSON, prev included)."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class HeadAnchor(Protocol):
    """A copy of the chain's head kept outside the log's folder; any thread."""

    where: str  # named in verify's messages, e.g. "the OS keyring"

    def read(self) -> tuple[str, int] | None:
        """The last hash and line count written (None: none kept, or unreadable)."""
        ...

    def write(self, head: str, lines: int) -> bool:
        """Keep ``head`` and ``lines``; False when it cannot be kept here."""
        ...

    def usable(self) -> bool:
        """Whether a head can be kept here at all (None from ``read`` then means gone)."""
        ...


class KeyringAnchor:
    """The head in the OS keyring (``desktop.base.keychain``), one entry per log folder.

    Not a file: deleting or copying back the audit folder (or the data folder) does not
    touch it. Without a usable keyring nothing is kept and ``read`` says None.
    """

    SERVICE = "EdgeDesk audit head"
    where = "the OS keyring"

    def __init__(self, folder: Path) -> None:
        self._chain = Keychain(self.SERVICE, "audit log head")
        self._name = hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:32]

    def read(self) -> tuple[str, int] | None:
        """The head kept for this folder, if any."""
        text = self._chain.get(self._name)
        if not text:
            return None
        try:
            data = json.loads(text)
            return str(data["hash"]), int(data["lines"])
        except (ValueError, KeyError, TypeError):
            return None

    def usable(self) -> bool:
        """Whether the OS keyring works here."""
        return self._chain.usable()

    def write(self, head: str, lines: int) -> bool:
        """Keep the head; False without a usable keyring."""
        try:
            self._chain.set(self._name, json.dumps({"hash": head, "lines": lines}))
        except ConfigError:
            return False
        return True


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

    def __init__(
        self,
        folder: Path,
        *,
        clock: Callable[[], float] = time.time,
        anchor: HeadAnchor | None = None,
    ) -> None:
        self.folder = folder
        self.clock = clock
        self.anchor = anchor  # the head kept outside the folder (None: the folder only)
        # The head this process last wrote to the file and the anchor alike: while the file
        # still says it, the anchor is not read again (a keyring call per audited request).
        self._wrote: tuple[str, int] | None = None
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

    def _head_file(self) -> tuple[str, int] | None:
        try:
            data = json.loads((self.folder / HEAD_FILE).read_text(encoding="utf-8"))
            return str(data["hash"]), int(data["lines"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _head(self) -> tuple[str, int]:
        """Where the next line chains on: the anchor's head unless the file's is further
        on (an anchor write that failed). A cut log with a rewritten head file then
        still chains from the true end, so the cut stays visible."""
        in_file = self._head_file()
        if in_file is not None and in_file == self._wrote:
            return in_file  # nobody wrote since this process did: the anchor says the same
        heads = [in_file, self.anchor.read() if self.anchor is not None else None]
        return max((h for h in heads if h is not None), key=lambda h: h[1], default=(GENESIS, 0))

    def record(self, event: str, **fields: Any) -> None:
        """Append one event (``fields`` must carry no content: names, ids, numbers)."""
        now = self.clock()
        # Any: the caller's **fields (names, ids, numbers), written as JSON
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
                self._wrote = None
                if self.anchor is not None and not self.anchor.write(entry["hash"], count + 1):
                    self._warn_once(f"cannot keep the audit head in {self.anchor.where}")
                elif self.anchor is not None:
                    self._wrote = (entry["hash"], count + 1)
        except OSError as exc:
            self._warn_once(f"cannot write the audit log in {self.folder}: {exc}")

    def _warn_once(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning("%s", message)

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
            in_file = self._head_file()
            anchored = self.anchor.read() if self.anchor is not None else None
        written = bool(result.lines or in_file)
        if anchored is None and self.anchor is not None and written and self.anchor.usable():
            # Every line written while it works keeps the head there: gone, the log may
            # have been rewritten whole from its start, head file and all.
            result.problems.append(
                f"the copy of its head in {self.anchor.where} is missing although "
                f"{self.anchor.where} works: it was deleted, so the log may have been "
                "rewritten from its start and the chain cannot be trusted"
            )
        self._check_end(result, prev, in_file, anchored)
        return result

    def _check_end(
        self,
        result: Verification,
        prev: str,
        in_file: tuple[str, int] | None,
        anchored: tuple[str, int] | None,
    ) -> None:
        """The end of the chain against the head file and the anchor: cut-off last lines
        leave no break inside the chain, only a short one; a deleted file or folder
        leaves nothing to walk, which is a break too while auditing is on."""
        if result.lines == 0 and in_file is None:
            result.problems.append(
                f"no audit log or {HEAD_FILE} in {self.folder} although auditing is on "
                "(deleted, or nothing was recorded yet)"
            )
        elif in_file is None:
            result.problems.append(
                f"{HEAD_FILE} is missing (deleted): the end of the log cannot be checked against it"
            )
        for kept, where in ((in_file, "the head file"), (anchored, self._where)):
            if kept is None:
                continue
            head, count = kept
            if head != prev or (count != result.lines and not result.problems):
                result.problems.append(
                    f"the log ends after {result.lines} lines but {where} says {count} "
                    "were written (last lines removed, or a day file or the head removed "
                    "or changed)"
                )
                return

    @property
    def _where(self) -> str:
        return "the copy of its head in " + (self.anchor.where if self.anchor else "?")

    # Any: each line's JSON as written by record(); readers pick fields by name
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
