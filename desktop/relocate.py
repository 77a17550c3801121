"""Moving EdgeDesk's data (chats, document indexes, keys, downloaded models) to a new folder.

The data folder cannot move under a running app: the database is open and models are
memory-mapped. So the window only *requests* a move (a small file in the config folder)
and the next start performs it before anything is opened. ``data_location`` in the user's
settings changes only after every file has arrived, so an interrupted or failed move
leaves the app on the old folder with nothing lost.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from desktop.config import EffectiveSettings, Paths, save_user_settings
from desktop.errors import ConfigError

PENDING_FILE = "data-move.json"
LOCK_NAME = ".in-use"
ProgressFn = Callable[[int, int], None]  # bytes done, bytes in all


@dataclass(frozen=True)
class PendingMove:
    """A move the user asked for; ``move`` False switches folders without copying."""

    target: Path
    move: bool


@dataclass(frozen=True)
class MoveReport:
    """What a finished relocation did, for a one-line message."""

    source: Path
    target: Path
    moved_bytes: int
    moved: bool


def _pending_path(paths: Paths) -> Path:
    return paths.config_dir / PENDING_FILE


def _size_text(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.1f} MB"


def _entries(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(e for e in folder.iterdir() if e.name != LOCK_NAME)


class DataFolderLock:
    """Held shared by every EdgeDesk process using a data folder; a move needs it alone.

    POSIX ``flock``: the kernel drops it when a process dies, so a crash never leaves the
    folder stuck. On Windows there is no lock; renaming an open file fails there instead,
    and the move rolls back.
    """

    def __init__(self, folder: Path) -> None:
        self._path = folder / LOCK_NAME
        self._file: IO[bytes] | None = None

    def _flock(self, flags: int) -> bool:
        if sys.platform == "win32":
            return True
        import fcntl

        if self._file is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self._path, "ab")  # noqa: SIM115 - held for the context's life
            # Closed (lock dropped) when the context that holds this lock goes away.
            self._closer = weakref.finalize(self, self._file.close)
        try:
            fcntl.flock(self._file.fileno(), flags)
        except BlockingIOError:
            return False
        return True

    def share(self) -> None:
        """Mark the folder in use by this process (many may share it)."""
        if sys.platform != "win32":
            import fcntl

            self._flock(fcntl.LOCK_SH)

    def try_exclusive(self) -> bool:
        """Whether no other EdgeDesk process uses the folder (then it is ours alone)."""
        if sys.platform == "win32":
            return True
        import fcntl

        return self._flock(fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self) -> None:
        """Let go of the lock."""
        if self._file is not None:
            self._closer()
            self._file = None


def _size(entry: Path) -> int:
    if entry.is_symlink() or entry.is_file():
        return entry.lstat().st_size
    return sum(p.lstat().st_size for p in entry.rglob("*") if p.is_file() or p.is_symlink())


def check_target(source: Path, target: Path, *, move: bool) -> None:
    """Refuse targets that would lose or tangle data, with a reason the user can act on."""
    if not target.is_absolute():
        raise ConfigError(f"data location must be an absolute path, got '{target}'")
    source, target = source.resolve(), target.resolve()
    if target == source:
        raise ConfigError(f"EdgeDesk already keeps its data in {target}")
    if target.is_relative_to(source) or (move and source.is_relative_to(target)):
        raise ConfigError(f"{target} and {source} contain each other; "
                          "choose a folder outside the current data folder")
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file, not a folder")
    if move:
        clashes = [e.name for e in _entries(source) if (target / e.name).exists()]
        if clashes:
            raise ConfigError(f"{target} already holds {', '.join(clashes[:3])}; choose an "
                              "empty folder, or use the folder as it is without moving")
    probe = target if target.exists() else next(p for p in target.parents if p.exists())
    if not os.access(probe, os.W_OK):
        raise ConfigError(f"cannot write to {probe}; choose a folder you own")


def request_move(paths: Paths, effective: EffectiveSettings, target: Path, *,
                 move: bool) -> PendingMove:
    """Record a move for the next start, after checking it can work."""
    if effective.is_locked("data_location"):
        raise ConfigError("the data location is set by your organization and cannot be changed")
    check_target(paths.data_dir, target, move=move)
    pending = PendingMove(target.resolve(), move)
    _pending_path(paths).write_text(
        json.dumps({"target": str(pending.target), "move": move}), encoding="utf-8")
    return pending


def pending_move(paths: Paths) -> PendingMove | None:
    """The move waiting for the next start, if any (an unreadable request is dropped)."""
    path = _pending_path(paths)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return PendingMove(Path(raw["target"]), bool(raw["move"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        path.unlink(missing_ok=True)
        return None


def cancel_move(paths: Paths) -> bool:
    """Forget a requested move; True if there was one."""
    path = _pending_path(paths)
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def move_data(source: Path, target: Path, progress: ProgressFn | None = None) -> int:
    """Move every entry of ``source`` into ``target``; all or nothing. Returns bytes moved.

    On one file system each entry is renamed (instant, even for 40 GB models); across
    file systems everything is copied first and the originals are removed only after the
    last copy succeeded, so a full disk or a yanked drive leaves the source intact.
    """
    check_target(source, target, move=True)
    target.mkdir(parents=True, exist_ok=True)
    entries = _entries(source)
    total = sum(_size(e) for e in entries)
    if os.stat(source).st_dev == os.stat(target).st_dev:
        return _rename_all(entries, target, total, progress)
    free = shutil.disk_usage(target).free
    if total > free:
        raise ConfigError(f"{target} has {free / 1e9:.1f} GB free but EdgeDesk's data needs "
                          f"{total / 1e9:.1f} GB; free some space or choose another drive")
    return _copy_all(entries, target, total, progress)


def _rename_all(entries: list[Path], target: Path, total: int,
                progress: ProgressFn | None) -> int:
    done: list[Path] = []
    try:
        for entry in entries:
            entry.rename(target / entry.name)
            done.append(entry)
    except OSError as exc:
        for entry in reversed(done):  # put back what already moved
            (target / entry.name).rename(entry)
        raise ConfigError(f"could not move {entry.name} to {target}: {exc.strerror}") from None
    if progress is not None:
        progress(total, total)
    return total


def _copy_all(entries: list[Path], target: Path, total: int,
              progress: ProgressFn | None) -> int:
    copied: list[Path] = []
    moved = 0

    def copy_file(src: str, dst: str) -> object:
        nonlocal moved
        result = shutil.copy2(src, dst)
        moved += os.path.getsize(src)
        if progress is not None:
            progress(moved, total)
        return result

    try:
        for entry in entries:
            destination = target / entry.name
            copied.append(destination)
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, destination, symlinks=True, copy_function=copy_file)
            else:
                copy_file(str(entry), str(destination))
    except OSError as exc:
        for destination in copied:
            if destination.is_dir() and not destination.is_symlink():
                shutil.rmtree(destination, ignore_errors=True)
            else:
                destination.unlink(missing_ok=True)
        raise ConfigError(f"could not copy EdgeDesk's data to {target} ({exc}); "
                          "nothing was moved") from None
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return moved


def apply_pending_move(paths: Paths, effective: EffectiveSettings,
                       progress: ProgressFn | None = None) -> MoveReport | None:
    """Carry out a requested move at start-up, then point ``data_location`` at the target.

    The request is consumed either way; a failure raises ConfigError with the data still
    in ``paths.data_dir``.
    """
    pending = pending_move(paths)
    if pending is None:
        return None
    cancel_move(paths)
    if effective.is_locked("data_location"):
        raise ConfigError("the data location is set by your organization; the move you "
                          "asked for was not made")
    source = paths.data_dir
    moved = move_data(source, pending.target, progress) if pending.move else 0
    if not pending.move:
        check_target(source, pending.target, move=False)
        pending.target.mkdir(parents=True, exist_ok=True)
    save_user_settings(paths, {"data_location": str(pending.target)}, effective)
    return MoveReport(source, pending.target, moved, pending.move)


@dataclass(frozen=True)
class StartLocation:
    """Where this start keeps its data, and what to tell the user about a requested move."""

    paths: Paths
    effective: EffectiveSettings
    notice: str | None
    outcome: Literal["none", "moved", "waiting", "failed"] = "none"


def relocate_at_start(paths: Paths, effective: EffectiveSettings,
                      reload: Callable[[], EffectiveSettings],
                      progress: ProgressFn | None = None) -> StartLocation:
    """Perform a requested move if no other EdgeDesk process has the folder open.

    ``paths`` already honour ``data_location``; ``reload`` re-reads the settings after
    the move wrote the new location.
    """
    pending = pending_move(paths)
    if pending is None:
        return StartLocation(paths, effective, None)
    lock = DataFolderLock(paths.data_dir)
    try:
        if not lock.try_exclusive():
            return StartLocation(paths, effective, (
                f"Your data will move to {pending.target} once every other EdgeDesk window "
                "and server has quit."), "waiting")
        report = apply_pending_move(paths, effective, progress)
    except ConfigError as exc:
        return StartLocation(paths, effective,
                             f"Your data stays in {paths.data_dir}: {exc.message}", "failed")
    finally:
        lock.release()
    if report is not None:
        (report.source / LOCK_NAME).unlink(missing_ok=True)
    effective = reload()
    moved = (f"Moved your data ({_size_text(report.moved_bytes)}) to {report.target}."
             if report is not None and report.moved else
             f"EdgeDesk now keeps its data in {pending.target}.")
    return StartLocation(paths.located(effective.settings.data_location), effective, moved,
                         "moved")
