"""Owner-only data: the folders and files that hold conversations and documents.

On a shared machine whose home folders are traversable, a 0755 data folder and a 0644
database let any local user read every chat and indexed document. So on POSIX:

- the process creates files 0600 and folders 0700 (``restrict_new_files``: umask 077,
  which also covers SQLite's WAL/SHM files, logs, exports and indexes);
- the app's folders are checked and repaired at start (``repair_tree``), so data left by
  an older version, a copy or a restore becomes owner-only too;
- the database is created 0600 whatever the umask (``private_file``).

Windows keeps per-user ACLs on the profile folders, so nothing is changed there.
Plain functions; call them from the composition root or the store, on any thread.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_POSIX = os.name == "posix"


def restrict_new_files() -> None:
    """Make every file and folder this process creates owner-only (umask 077)."""
    if _POSIX:
        os.umask(0o077)


def private_folder(path: Path) -> None:
    """Create ``path`` (and parents) if missing, and make it owner-only."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    _restrict(path, FOLDER_MODE)


def private_file(path: Path) -> None:
    """Create ``path`` empty if missing, owner-only even under a lax umask."""
    if _POSIX:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    else:
        path.touch(exist_ok=True)
    _restrict(path, FILE_MODE)


def _restrict(path: Path, mode: int) -> bool:
    """Drop group/other access from ``path``; True if it had any."""
    if not _POSIX:
        return False
    try:
        current = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(current.st_mode) or not current.st_mode & 0o077:
        return False
    # Only our own files: another user's file (a shared models folder) is left alone.
    if current.st_uid != os.getuid():
        return False
    os.chmod(path, stat.S_IMODE(current.st_mode) & ~0o077 | (mode & 0o700))
    return True


def restrict_files(paths: Iterable[Path]) -> None:
    """Make each existing file in ``paths`` owner-only (missing ones are skipped)."""
    for path in paths:
        _restrict(path, FILE_MODE)


def repair_tree(roots: Iterable[Path]) -> list[Path]:
    """Make the folders under ``roots`` 0700 and their files 0600; return what changed."""
    changed: list[Path] = []
    for root in roots:
        if not root.is_dir():
            continue
        if _restrict(root, FOLDER_MODE):
            changed.append(root)
        for folder, subfolders, files in os.walk(root):
            base = Path(folder)
            changed += [base / d for d in subfolders if _restrict(base / d, FOLDER_MODE)]
            changed += [base / f for f in files if _restrict(base / f, FILE_MODE)]
    return changed
