"""Resumable, verified transfer of model files: the bytes always end up right or not at all.

Each file is written to ``<name>.part`` with HTTP Range requests, so a dropped
connection, a stall, a killed process or a reboot continues from the bytes already on
disk (re-hashed first, never trusted blindly). The SHA-256 is computed while writing and
compared with the Hub's; a match is renamed into place atomically, a mismatch is moved
to a quarantine folder. A lock file per target keeps two pulls from writing one file.
Blocking; progress goes to a callback and a ``threading.Event`` cancels (= pause: the
``.part`` stays, pulling again resumes); ``discard`` throws a paused download away.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import httpx
from filelock import FileLock, Timeout

from desktop.base.errors import (
    AuthRequired,
    Cancelled,
    DownloadError,
    InvalidRequest,
    ModelNotFound,
)
from desktop.base.filebytes import format_bytes, hash_into, sha256_file
from desktop.base.net import NetGate, Transport, explain
from desktop.catalog._cancel import wake_on_cancel
from desktop.catalog._hub import RemoteFile

# Keep some room after the download: a full disk breaks far more than our file.
DISK_MARGIN = 256 * 1024 * 1024


@dataclass(frozen=True)
class Progress:
    """Where a pull stands: bytes over all its files, speed and time left."""

    filename: str
    done: int
    total: int
    speed_bps: float
    eta_s: float | None


@dataclass(frozen=True)
class Fetched:
    """A verified file in its final place."""

    path: Path
    size: int
    sha256: str


ProgressFn = Callable[[Progress], None]


class _Retryable(Exception):
    def __init__(self, reason: str, wait_s: float | None = None) -> None:
        super().__init__(reason)
        self.wait_s = wait_s


class _Meter:
    """Smoothed speed and ETA over a whole pull."""

    def __init__(self, total: int, progress: ProgressFn | None, interval_s: float) -> None:
        self.total = total
        self.progress = progress
        self.interval_s = interval_s
        self.speed = 0.0
        self._last_t = time.monotonic()
        self._last_done = -1

    def report(self, name: str, done: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if self._last_done < 0:
            self._last_done = done
        elapsed = now - self._last_t
        if not force and elapsed < self.interval_s:
            return
        if elapsed > 0 and done >= self._last_done:
            rate = (done - self._last_done) / elapsed
            self.speed = rate if self.speed == 0 else 0.7 * self.speed + 0.3 * rate
        self._last_t, self._last_done = now, done
        eta = (self.total - done) / self.speed if self.speed > 0 else None
        if self.progress is not None:
            self.progress(Progress(name, done, self.total, self.speed, eta))


class _Part:
    """The ``.part`` file being written: its length and the SHA-256 of its bytes so far."""

    def __init__(self, out: BinaryIO, path: Path) -> None:
        self.out = out
        self.hasher = hashlib.sha256()
        self.offset = hash_into(path, self.hasher)

    def append(self, chunk: bytes) -> None:
        self.out.write(chunk)
        self.hasher.update(chunk)
        self.offset += len(chunk)

    def restart(self) -> None:
        self.out.truncate(0)
        self.hasher = hashlib.sha256()
        self.offset = 0


class Downloader:
    """Fetches pinned Hub files into place; every request goes through the network gate."""

    def __init__(
        self,
        gate: NetGate,
        *,
        quarantine_dir: Path,
        lock_dir: Path,
        token: str | None = None,
        stall_s: float = 30.0,
        connect_s: float = 15.0,
        max_attempts: int = 8,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        progress_interval_s: float = 0.25,
        transport: Transport | None = None,
    ) -> None:
        self.gate = gate
        self.transport = transport  # OS trust store + CaBundle, proxy (None: httpx defaults)
        self.quarantine_dir = quarantine_dir
        self.lock_dir = lock_dir
        self.token = token
        self.stall_s = stall_s
        self.connect_s = connect_s
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.progress_interval_s = progress_interval_s

    def pull(
        self,
        files: list[RemoteFile],
        dest_dir: Path,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> list[Fetched]:
        """Download ``files`` (e.g. all shards of one model) to ``dest_dir/<repo>/<file>``."""
        cancel = cancel or threading.Event()
        self.gate.ensure_online(f"download {files[0].repo}", download=True)
        targets = [dest_dir / f.repo / f.filename for f in files]
        self.check_disk(files, targets)
        meter = _Meter(sum(f.size for f in files), progress, self.progress_interval_s)
        fetched, base = [], 0
        for remote, target in zip(files, targets, strict=True):
            fetched.append(self.fetch(remote, target, meter=meter, base=base, cancel=cancel))
            base += remote.size
        meter.report(files[-1].filename, base, force=True)
        return fetched

    def check_disk(self, files: list[RemoteFile], targets: list[Path]) -> None:
        """Fail before the first byte if the files cannot fit, with the numbers."""
        need = 0
        for remote, target in zip(files, targets, strict=True):
            if target.exists() and target.stat().st_size == remote.size:
                continue
            part = _part(target)
            need += remote.size - (part.stat().st_size if part.exists() else 0)
        if need <= 0:
            return
        probe = targets[0].parent
        while not probe.exists():
            probe = probe.parent
        free = shutil.disk_usage(probe).free
        if free < need + DISK_MARGIN:
            raise DownloadError(
                f"not enough free disk space in {probe}: the download needs {format_bytes(need)} "
                f"(+{format_bytes(DISK_MARGIN)} headroom), only {format_bytes(free)} is free",
                kind="no_disk_space",
                params={
                    "folder": probe,
                    "need": format_bytes(need),
                    "headroom": format_bytes(DISK_MARGIN),
                    "free": format_bytes(free),
                },
            )

    def discard(
        self, targets: list[Path], *, root: Path, finished: Callable[[], Collection[Path]] = tuple
    ) -> int:
        """Delete the ``.part`` of every target, and the ``finished()`` ones; returns bytes freed.

        All the targets' locks are held first, so a pull still writing any of them (another
        window, a terminal) is never cut short: that raises DownloadError and deletes
        nothing. ``finished`` is asked only then: a pull that completed the model while
        this waited must not lose the shards it just installed. Other finished targets are
        never touched. Folders left empty under ``root`` go too. The lock files stay:
        deleting a lock another process may be waiting on would let two pulls hold "the"
        lock at once.
        """
        base = root.resolve()
        for target in targets:
            if base not in target.resolve().parents:
                raise InvalidRequest(
                    f"{target} is outside the models folder {root}; not deleting anything there"
                )
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        freed = 0
        with contextlib.ExitStack() as held:
            for target in targets:
                lock = FileLock(str(self._lock_path(target)))
                try:
                    lock.acquire(timeout=1.0)
                except Timeout:
                    raise DownloadError(
                        f"{target.name} is still being downloaded (another window or "
                        "'edgedesk models pull'); stop that download first",
                        kind="download_busy",
                        params={"file": target.name},
                    ) from None
                held.callback(lock.release)
            done = set(finished())
            for path in [_part(t) for t in targets] + [t for t in targets if t in done]:
                with contextlib.suppress(FileNotFoundError):
                    size = path.stat().st_size
                    path.unlink()
                    freed += size
        for parent in {t.resolve().parent for t in targets}:
            folder = parent
            while folder != base and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
        return freed

    def _lock_path(self, target: Path) -> Path:
        key = hashlib.sha1(str(target).encode(), usedforsecurity=False).hexdigest()[:16]
        return self.lock_dir / f"{key}.lock"

    def fetch(
        self,
        remote: RemoteFile,
        target: Path,
        *,
        meter: _Meter | None = None,
        base: int = 0,
        cancel: threading.Event | None = None,
    ) -> Fetched:
        """One file into ``target``, resuming its ``.part``; verified before the rename."""
        cancel = cancel or threading.Event()
        meter = meter or _Meter(remote.size, None, self.progress_interval_s)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self._lock_path(target)))
        while True:  # wait for another pull of this file, but stay cancellable
            try:
                lock.acquire(timeout=0.5)
                break
            except Timeout:
                if cancel.is_set():
                    raise Cancelled(
                        f"stopped waiting for another pull of {remote.filename}"
                    ) from None
        try:
            if target.exists() and target.stat().st_size == remote.size:
                # Already here: trusted only if its bytes are the Hub's (same size is not).
                digest = sha256_file(target)
                if remote.sha256 is None or digest == remote.sha256:
                    meter.report(remote.filename, base + remote.size)
                    return Fetched(target, remote.size, digest)
            return self._transfer(remote, target, meter, base, cancel)
        finally:
            lock.release()

    def _transfer(
        self, remote: RemoteFile, target: Path, meter: _Meter, base: int, cancel: threading.Event
    ) -> Fetched:
        part_path = _part(target)
        if part_path.exists() and part_path.stat().st_size > remote.size:
            part_path.unlink()  # longer than the file can be: not ours to trust
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        hook = self.gate.hook(f"download {remote.repo}/{remote.filename}", download=True)
        failures, last = 0, ""
        tls = self.transport.httpx_options() if self.transport is not None else {}
        with (
            httpx.Client(
                timeout=httpx.Timeout(self.stall_s, connect=self.connect_s),
                follow_redirects=True,
                headers=headers,
                **tls,
                event_hooks={"request": [hook]},
            ) as client,
            part_path.open("ab") as out,
        ):
            part = _Part(out, part_path)  # re-hashes what an earlier run left
            while part.offset < remote.size:
                if cancel.is_set():
                    raise self._paused(remote, part.offset)
                before = part.offset
                try:
                    self._stream(client, remote, part, meter=meter, base=base, cancel=cancel)
                    continue
                except Cancelled:
                    raise
                except _Retryable as exc:
                    wait, last = exc.wait_s, str(exc)
                except httpx.TransportError as exc:  # drops, resets, stalls (read timeout)
                    # Named for the user: an untrusted certificate or a refusing proxy is
                    # something IT fixes, not a flaky line.
                    wait, last = None, explain(exc, httpx.URL(remote.url).host)
                except Exception:
                    # The socket shut down for a cancel can end a read with errors httpx
                    # does not map to TransportError (ValueError from a TLS socket): once
                    # cancelled, whatever ended the read is the pause the user asked for.
                    if not cancel.is_set():
                        raise
                    raise self._paused(remote, part.offset) from None
                finally:
                    out.flush()
                if cancel.is_set():  # the cancel itself ended the read: not a failure
                    raise self._paused(remote, part.offset)
                # Only consecutive tries that brought no bytes count towards giving up.
                failures = 1 if part.offset > before else failures + 1
                if failures >= self.max_attempts:
                    raise DownloadError(
                        f"{remote.filename} from {remote.repo}: gave up after {failures} tries "
                        f"({last}); {part.offset} of {remote.size} bytes kept, run the same "
                        "pull again to resume",
                        kind="download_gave_up",
                        params={"file": remote.filename, "repo": remote.repo, "tries": failures},
                    )
                delay = (
                    wait
                    if wait is not None
                    else min(self.backoff_s * 2 ** (failures - 1), self.max_backoff_s)
                )
                if cancel.wait(delay):
                    raise self._paused(remote, part.offset)
            out.flush()
            os.fsync(out.fileno())
        return self._verify(remote, target, part_path, part.hasher.hexdigest())

    def _stream(
        self,
        client: httpx.Client,
        remote: RemoteFile,
        part: _Part,
        *,
        meter: _Meter,
        base: int,
        cancel: threading.Event,
    ) -> None:
        """One GET from ``part.offset``, appending to the part; raises to retry."""
        with client.stream("GET", remote.url, headers={"Range": f"bytes={part.offset}-"}) as resp:
            if not self._accept(resp, remote, part):
                return
            undo = wake_on_cancel(cancel, resp)
            try:
                # No chunk_size: httpx would buffer up to it and lose those bytes on a drop.
                for chunk in resp.iter_bytes():
                    part.append(chunk)
                    meter.report(remote.filename, base + part.offset)
                    if cancel.is_set():
                        raise self._paused(remote, part.offset)
            finally:
                undo()
        if part.offset < remote.size:
            raise _Retryable(f"connection closed at byte {part.offset}")

    def _accept(self, resp: httpx.Response, remote: RemoteFile, part: _Part) -> bool:
        """Whether the body should be appended; raises for refusals and retryable answers."""
        status = resp.status_code
        if status == 416 and part.offset:
            if part.offset != remote.size:
                part.restart()  # our part does not fit the file any more
            return False
        if status in (401, 403):
            raise AuthRequired(
                f"the Hub refused {remote.filename} from {remote.repo} ({status}): the "
                "repo is gated or private; accept its terms on the Hub and run "
                "'edgedesk auth login'"
            )
        if status == 404:
            raise ModelNotFound(
                f"{remote.filename} not found in {remote.repo} at revision {remote.revision[:12]}"
            )
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}", _retry_after(resp.headers.get("Retry-After")))
        if status == 200 and part.offset:
            part.restart()  # the server ignored our Range: never append a second copy
        elif status == 206:
            start = _content_range_start(resp.headers.get("Content-Range"))
            if start != part.offset:
                raise _Retryable(f"server sent bytes from {start}, asked for {part.offset}")
        elif status != 200:
            raise DownloadError(f"{remote.filename} from {remote.repo}: unexpected HTTP {status}")
        return True

    def _paused(self, remote: RemoteFile, offset: int) -> Cancelled:
        pct = 100 * offset // max(remote.size, 1)
        return Cancelled(
            f"download of {remote.filename} paused at {pct}%; run the same pull again to resume"
        )

    def _verify(self, remote: RemoteFile, target: Path, part: Path, digest: str) -> Fetched:
        size = part.stat().st_size
        if size != remote.size or (remote.sha256 and digest != remote.sha256):
            self.quarantine_dir.mkdir(parents=True, exist_ok=True)
            bad = self.quarantine_dir / f"{target.name}.{int(time.time())}.bad"
            os.replace(part, bad)
            expected = remote.sha256 or "?"
            raise DownloadError(
                f"{remote.filename} from {remote.repo} is corrupt (SHA-256 {digest[:16]}…, "
                f"expected {expected[:16]}…; {size} of {remote.size} bytes); moved to {bad}; "
                "run the pull again to download it afresh",
                kind="download_corrupt",
                params={"file": remote.filename, "repo": remote.repo, "moved_to": bad},
            )
        os.replace(part, target)
        return Fetched(target, size, digest)


def _part(target: Path) -> Path:
    return target.with_name(target.name + ".part")


def _content_range_start(value: str | None) -> int:
    # "bytes 100-199/200"
    try:
        return int((value or "").split()[1].split("-")[0])
    except (IndexError, ValueError):
        return -1


def _retry_after(value: str | None) -> float | None:
    try:
        return min(float(value), 120.0) if value else None
    except ValueError:
        return None
