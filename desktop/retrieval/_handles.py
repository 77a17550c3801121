"""Indexed files read by handle: no link followed below the root, the opened file checked.

Checking a path and then opening it by that path leaves a gap: a file (or a folder
above it) swapped for a link in between is opened where the link leads, out of the
indexed folder. So a file is opened the way ``openat`` allows: from the root's own
folder handle, one name at a time, each with ``O_NOFOLLOW``; a link met on the way
fails the open instead of being followed. The opened handle is then checked: a
regular file and, on Linux, its real path (``/proc/self/fd``) still inside the root.
Everything after (size, hash, text) is read from that one handle.

Where Python offers no ``dir_fd`` opens or ``O_NOFOLLOW`` (Windows) the file is opened
by its resolved path and the handle's device and inode are compared with that path's,
after the open: a swap in between is refused, never read.

A file with other hard links (``st_nlink > 1``) may be a name for a file outside the
folder (``ln /home/me/.ssh/id_ed25519 notes.txt`` needs no link to follow): the indexer
skips one unless ``documents.allow_hard_links`` is on (``hard_link_reason``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as st
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.retrieval._fsnames import outside_reason, real

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in the folder must not block
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# Opening name by name from a folder handle needs both; else the checked fallback.
BY_HANDLE = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd
_PROC_FD = Path("/proc/self/fd")
_LINK_ERRORS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})


class Refused(Exception):
    """This file is not read, for ``reason`` (it moved, became a link, left the root)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Opened:
    """A file opened inside its root: its descriptor (the caller's to close) and stat."""

    fd: int
    stat: os.stat_result


MOVED = "it changed while being read (a link appeared on its path); not followed"


def hard_link_reason(links: int) -> str:
    """Why a file with other hard links is skipped."""
    return (
        f"has {links} hard links: it may be a name for a file outside the indexed "
        "folder; skipped (set documents.allow_hard_links = true to index such files)"
    )


def root_of(target: str, real_roots: Sequence[str]) -> str | None:
    """The root of ``real_roots`` holding the resolved path ``target``, or None."""
    for root in real_roots:
        try:
            if os.path.commonpath([target, root]) == root:
                return root
        except ValueError:  # another drive
            continue
    return None


def open_inside(path: Path, real_roots: Sequence[str]) -> Opened:
    """Open ``path`` for reading, inside one of ``real_roots`` (``_fsnames.real_root``).

    A link within the root (``alias.txt -> notes.txt``) is resolved once, and what it
    leads to is opened from the root without following anything; Refused when the file
    (or a folder above it) leads out of the roots, became a link, or is not a regular
    file. OSError when it cannot be opened (gone, no permission).
    """
    target = real(path)
    root = root_of(target, real_roots)
    if root is None:
        raise Refused(outside_reason(path))
    fd = _open_by_handle(target, root) if BY_HANDLE else _open_checked(target, root)
    try:
        info = os.fstat(fd)
        if not st.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if not _fd_inside(fd, root):
            raise Refused(MOVED)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, info)


@contextlib.contextmanager
def opened_inside(path: Path, real_roots: Sequence[str]) -> Iterator[Opened]:
    """``open_inside`` as a context: the descriptor is closed at the end."""
    found = open_inside(path, real_roots)
    try:
        yield found
    finally:
        os.close(found.fd)


def read_all(fd: int, limit: int) -> bytes:
    """The bytes behind ``fd`` from its start, at most ``limit`` + 1 (so a caller can see
    a file that grew past its limit since it was measured)."""
    parts: list[bytes] = []
    left = limit + 1
    os.lseek(fd, 0, os.SEEK_SET)
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def still_inside(path: Path, real_roots: Sequence[str]) -> bool:
    """Whether ``path`` opens, by handle, as a regular file inside ``real_roots`` now."""
    try:
        with opened_inside(path, real_roots):
            return True
    except (Refused, OSError):
        return False


def open_no_links(path: Path) -> Opened:
    """Open the file ``path`` names without following it if it is a link now: what a
    viewer of a cited file reads (its folder's own links, ``/var`` on macOS, resolved).
    Refused on a link or a non-file; OSError when it cannot be opened."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return open_inside(Path(folder) / path.name, [os.path.normcase(folder)])


def _flags(directory: bool) -> int:
    base = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _BINARY
    return base | (_DIRECTORY if directory else _NONBLOCK)


def _open_step(name: str, *, dir_fd: int | None, directory: bool) -> int:
    try:
        return os.open(name, _flags(directory), dir_fd=dir_fd)
    except OSError as exc:
        # ELOOP (EMLINK on BSDs): the name is a link now; ENOTDIR: a folder on the
        # way became a link (O_DIRECTORY with O_NOFOLLOW) or a file.
        if exc.errno in _LINK_ERRORS:
            raise Refused(MOVED) from None
        raise


def _open_by_handle(target: str, root: str) -> int:
    """Open ``target`` from ``root``'s folder handle, one name at a time, no links."""
    relative = os.path.relpath(target, root)
    names = [] if relative == os.curdir else relative.split(os.sep)
    if os.pardir in names:
        raise Refused(outside_reason(target))
    if not names:  # the root is this file: from its folder (the links above it resolved)
        parent, name = os.path.split(root)
        folder = os.open(parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            return _open_step(name, dir_fd=folder, directory=False)
        finally:
            os.close(folder)
    folder = _open_step(root, dir_fd=None, directory=True)  # the root itself no link
    try:
        for name in names[:-1]:
            inner = _open_step(name, dir_fd=folder, directory=True)
            os.close(folder)
            folder = inner
        return _open_step(names[-1], dir_fd=folder, directory=False)
    finally:
        os.close(folder)


def _open_checked(target: str, root: str) -> int:
    """Without ``dir_fd`` opens: open the resolved path, then make sure the handle is
    the file that path names now and that nothing on it became a link meanwhile."""
    fd = os.open(target, os.O_RDONLY | _CLOEXEC | _BINARY | _NOFOLLOW)
    try:
        opened, named = os.fstat(fd), os.stat(target, follow_symlinks=False)
        same = (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)
        if not same or real(target) != os.path.normcase(target) or root_of(target, [root]) is None:
            raise Refused(MOVED)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _fd_inside(fd: int, root: str) -> bool:
    """Where the system says where an open file is (Linux), that it is inside ``root``."""
    link = _PROC_FD / str(fd)
    try:
        where = os.readlink(link)
    except OSError:
        return True  # no /proc here: the name-by-name open is the guarantee
    if where.endswith(" (deleted)"):
        return False  # unlinked since it was opened
    return root_of(os.path.normcase(where), [root]) is not None
