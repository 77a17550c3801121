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
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from desktop.base.config import EffectiveSettings, Paths, save_user_settings
from desktop.base.errors import ConfigError
from desktop.base.filebytes import format_bytes

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
    left_behind: list[Path] = field(default_factory=list)  # originals that could not go


def _pending_path(paths: Paths) -> Path:
    return paths.config_dir / PENDING_FILE


def _entries(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(e for e in folder.iterdir() if e.name != LOCK_NAME)


class DataFolderLock:
    """Held shared by every EdgeDesk process using a data folder; a move needs it alone.

    POSIX ``flock``: the kernel drops it when a process dies, so a crash never leaves the
    folder stuck. Windows has no shared flock: there the test is whether the database can
    be renamed, which fails while another process has it open (not tested on Windows here).
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
            # No shared flock there; SQLite opens its file without FILE_SHARE_DELETE, so
            # renaming the database fails while any EdgeDesk has it open.
            database = self._path.parent / "edgedesk.db"
            probe = database.with_name(database.name + ".moving")
            try:
                if database.exists():
                    database.rename(probe)
                    probe.rename(database)
            except OSError:
                return False
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
        raise ConfigError(
            f"{target} and {source} contain each other; "
            "choose a folder outside the current data folder"
        )
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file, not a folder")
    if move:
        clashes = [e.name for e in _entries(source) if (target / e.name).exists()]
        if clashes:
            raise ConfigError(
                f"{target} already holds {', '.join(clashes[:3])}; choose an "
                "empty folder, or use the folder as it is without moving"
            )
    probe = next((p for p in (target, *target.parents) if p.exists()), None)
    if probe is None or not probe.is_dir():
        raise ConfigError(
            f"{target} cannot be created here ({probe or 'no such drive'}); "
            "choose a folder on a connected drive"
        )
    if not os.access(probe, os.W_OK):
        raise ConfigError(f"cannot write to {probe}; choose a folder you own")


def request_move(
    paths: Paths, effective: EffectiveSettings, target: Path, *, move: bool
) -> PendingMove:
    """Record a move for the next start, after checking it can work."""
    if effective.is_locked("data_location"):
        raise ConfigError("the data location is set by your organization and cannot be changed")
    check_target(paths.data_dir, target, move=move)
    pending = PendingMove(target.resolve(), move)
    try:
        _pending_path(paths).write_text(
            json.dumps({"target": str(pending.target), "move": move}), encoding="utf-8"
        )
    except OSError as exc:
        raise ConfigError(f"cannot record the move in {paths.config_dir} ({exc})") from None
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


@dataclass
class _Moved:
    """Data that arrived in the target; ``undo`` takes it back, ``finish`` tidies the source."""

    size: int
    undo: Callable[[], None]
    finish: Callable[[], list[Path]]  # returns what could not be removed


def move_data(source: Path, target: Path, progress: ProgressFn | None = None) -> _Moved:
    """Bring every entry of ``source`` into ``target``; all or nothing.

    On one file system each entry is renamed (instant, even for 40 GB models, rolled
    back on error). Across file systems everything is copied first; the originals are
    removed only by ``finish``, after the caller committed to the new place, so a full
    disk, a yanked drive or a crash leaves the source intact.
    """
    check_target(source, target, move=True)
    target.mkdir(parents=True, exist_ok=True)
    entries = _entries(source)
    total = sum(_size(e) for e in entries)
    if os.stat(source).st_dev == os.stat(target).st_dev:
        return _rename_all(entries, target, total, progress)
    free = shutil.disk_usage(target).free
    if total > free:
        raise ConfigError(
            f"{target} has {format_bytes(free)} free but EdgeDesk's data needs "
            f"{format_bytes(total)}; free some space or choose another drive"
        )
    return _copy_all(entries, target, total, progress)


def _rename_all(
    entries: list[Path], target: Path, total: int, progress: ProgressFn | None
) -> _Moved:
    done: list[Path] = []

    def undo() -> None:
        for entry in reversed(done):  # put back what already moved
            (target / entry.name).rename(entry)

    try:
        for entry in entries:
            entry.rename(target / entry.name)
            done.append(entry)
    except OSError as exc:
        undo()
        raise ConfigError(
            f"could not move {entry.name} to {target} ({exc.strerror}; is "
            "EdgeDesk still running?); nothing was moved"
        ) from None
    if progress is not None:
        progress(total, total)
    return _Moved(total, undo, list)


def _remove(paths: list[Path]) -> list[Path]:
    left: list[Path] = []
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            left.append(path)
    return left


def _copy_all(entries: list[Path], target: Path, total: int, progress: ProgressFn | None) -> _Moved:
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
            if entry.is_symlink():  # e.g. models/ linked to another disk: keep the link
                os.symlink(os.readlink(entry), destination)
            elif entry.is_dir():
                shutil.copytree(entry, destination, symlinks=True, copy_function=copy_file)
            else:
                copy_file(str(entry), str(destination))
    except OSError as exc:
        _remove(copied)
        raise ConfigError(
            f"could not copy EdgeDesk's data to {target} ({exc}); nothing was moved"
        ) from None

    def undo() -> None:
        _remove(copied)

    return _Moved(moved, undo, lambda: _remove(entries))


def apply_pending_move(
    paths: Paths, effective: EffectiveSettings, progress: ProgressFn | None = None
) -> MoveReport | None:
    """Carry out a requested move at start-up, then point ``data_location`` at the target.

    The request is consumed either way. The new location is saved only once every file
    arrived; until then a failure raises ConfigError with the data still in
    ``paths.data_dir``. Originals a cross-drive copy could not remove are reported.
    """
    pending = pending_move(paths)
    if pending is None:
        return None
    cancel_move(paths)
    if effective.is_locked("data_location"):
        raise ConfigError(
            "the data location is set by your organization; the move you asked for was not made"
        )
    source = paths.data_dir
    try:
        if pending.move:
            moved = move_data(source, pending.target, progress)
        else:
            check_target(source, pending.target, move=False)
            pending.target.mkdir(parents=True, exist_ok=True)
            moved = _Moved(0, lambda: None, list)
        try:
            save_user_settings(paths, {"data_location": str(pending.target)}, effective)
        except (ConfigError, OSError):
            moved.undo()
            raise
    except OSError as exc:
        raise ConfigError(
            f"could not move EdgeDesk's data to {pending.target} ({exc}); nothing was moved"
        ) from None
    return MoveReport(source, pending.target, moved.size, pending.move, moved.finish())


@dataclass(frozen=True)
class StartLocation:
    """Where this start keeps its data, and what to tell the user about a requested move."""

    paths: Paths
    effective: EffectiveSettings
    notice: str | None


def relocate_at_start(
    paths: Paths,
    effective: EffectiveSettings,
    reload: Callable[[], EffectiveSettings],
    progress: ProgressFn | None = None,
) -> StartLocation:
    """Perform a requested move if no other EdgeDesk process has the folder open.

    ``paths`` already honour ``data_location``; ``reload`` re-reads the settings after
    the move wrote the new location.
    """
    pending = pending_move(paths)
    if pending is None:
        return StartLocation(paths, effective, None)
    lock = DataFolderLock(paths.data_dir)
    try:
        # A data folder that is gone (a drive not connected) has nobody to wait for.
        if paths.data_dir.is_dir() and not lock.try_exclusive():
            return StartLocation(
                paths,
                effective,
                (
                    f"Your data will move to {pending.target} once every other EdgeDesk window "
                    "and server has quit."
                ),
            )
        report = apply_pending_move(paths, effective, progress)
    except ConfigError as exc:
        return StartLocation(
            paths, effective, f"Your data stays in {paths.data_dir}: {exc.message}"
        )
    finally:
        lock.release()  # the lock file stays: a process still waiting on it keeps its lock
    effective = reload()
    moved = (
        f"Moved your data ({format_bytes(report.moved_bytes)}) to {report.target}."
        if report is not None and report.moved
        else f"EdgeDesk now keeps its data in {pending.target}."
    )
    if report is not None and report.left_behind:
        moved += (
            " These could not be removed from the old folder; delete them when "
            "nothing uses them: " + ", ".join(str(p) for p in report.left_behind)
        )
    return StartLocation(paths.located(effective.settings.data_location), effective, moved)


def data_available(paths: Paths, effective: EffectiveSettings) -> bool:
    """Whether the data folder is there to use (or may be created: the default, a policy)."""
    chosen = effective.settings.data_location
    if not chosen or effective.sources.get("data_location") == "policy":
        return True
    # A folder the user moved the data to that is gone now is a drive not connected: a
    # new empty folder in its place would hide their chats until they noticed.
    return paths.data_dir.is_dir()


def open_data_folder(
    base: Paths,
    effective: EffectiveSettings,
    reload: Callable[[], EffectiveSettings],
    *,
    require_data: bool = True,
) -> tuple[Paths, EffectiveSettings, DataFolderLock]:
    """The data folder in use, created if needed and shared-locked for this process.

    A user-chosen folder that is missing raises ConfigError unless ``require_data`` is
    off (then nothing is created or locked, so another folder can be chosen).
    """
    lock = DataFolderLock(base.data_dir)
    paths = base
    for _ in range(3):  # another process's move may land while we wait for the lock
        paths = base.located(effective.settings.data_location)
        if not data_available(paths, effective):
            if require_data:
                raise ConfigError(
                    f"the data folder {paths.data_dir} is not available (is its drive "
                    "connected?); connect it and start again, or choose another folder "
                    "with 'edgedesk data use FOLDER'"
                )
            break
        paths.ensure()
        lock = DataFolderLock(paths.data_dir)
        lock.share()
        again = reload()
        if again.settings.data_location == effective.settings.data_location:
            break
        lock.release()
        effective = again
    return paths, effective, lock
