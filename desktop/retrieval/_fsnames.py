"""File names as text the database can hold, and back; walking folders.

On Linux a file name is bytes; one that is not UTF-8 reaches Python with its odd bytes
as lone surrogates (``surrogateescape``), which SQLite refuses. Such a name is stored
with those bytes written as ``\\xNN`` and turned back into the real name when opened.
Names that are valid text (nearly all) are stored exactly as they are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

_ESCAPED_BYTE = re.compile(rb"\\x([0-9a-f]{2})")


def path_text(path: Path | str) -> str:
    """``path`` as storable text: itself when it is valid UTF-8, else with \\xNN bytes."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return text


def fs_path(text: str) -> Path:
    """The file a ``path_text`` names (its escaped bytes restored when that file exists)."""
    plain = Path(text)
    if "\\x" not in text or plain.exists():
        return plain
    raw = _ESCAPED_BYTE.sub(lambda m: bytes([int(m[1], 16)]), text.encode("utf-8"))
    restored = Path(os.fsdecode(raw))
    return restored if restored.exists() else plain


def real(path: Path | str) -> str:
    """``path`` with every link (symlink, Windows junction) resolved, normalised for
    comparing (case folded where the file system ignores case)."""
    return os.path.normcase(os.path.realpath(path))


def real_root(root: Path) -> str:
    """An indexed root as ``within`` compares it: its folder's links resolved, not its own.

    A root is stored resolved when added; if it is later swapped for a link (to /etc),
    what it now leads to is outside the root it was, and nothing there is read.
    """
    return os.path.normcase(os.path.join(os.path.realpath(root.parent), root.name))


def within(path: Path | str, real_roots: Sequence[str]) -> bool:
    """Whether ``path``, its links resolved, is one of ``real_roots`` or under one.

    ``real_roots`` come from ``real``. A path on another drive (Windows) is outside.
    """
    target = real(path)
    for root in real_roots:
        try:
            if os.path.commonpath([target, root]) == root:
                return True
        except ValueError:  # another drive, or a relative path beside absolute ones
            continue
    return False


def outside_reason(path: Path | str) -> str:
    """Why a file or folder that leads out of its indexed folder is skipped."""
    return (
        f"links outside the indexed folder (to {os.path.realpath(path)}); "
        "not followed, so a planted link cannot expose other files"
    )


def root_link_reason(root: Path | str) -> str:
    """Why an indexed folder (or file) that became a link is refused."""
    return (
        f"this indexed folder is now a link (to {os.path.realpath(root)}); refused: "
        "a folder swapped for a link must not bring in where it leads. Remove it from "
        "the collection, or add the folder it leads to by its own path"
    )


def is_link(path: Path | str) -> bool:
    """Whether ``path`` itself is a link (symlink, or a Windows junction)."""
    return _is_link(os.fspath(path))


def _is_link(path: str) -> bool:
    isjunction = getattr(os.path, "isjunction", None)  # Python 3.12+; Windows only
    return os.path.islink(path) or bool(isjunction is not None and isjunction(path))


def walk(roots: Sequence[Path], unreadable: list[tuple[Path, str]]) -> Iterator[Path]:
    """Files under the roots; hidden files and folders (.git, .venv) are left out.

    A folder that cannot be listed (no permission, a path over the system's limit) is
    added to ``unreadable`` with why, so it is reported as skipped, not silently missed.
    A linked folder (symlink, junction) is never walked into: one that leads outside its
    root is reported in ``unreadable`` too (one inside is indexed by its real path).
    Linked files are yielded; the indexer checks where they lead (``within``).
    """

    def failed(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else Path("?")
        unreadable.append((where, f"cannot read folder ({exc.strerror or exc})"))

    for root in roots:
        if _is_link(os.fspath(root)):  # roots are stored resolved: it became a link since
            unreadable.append((root, root_link_reason(root)))
            continue
        if root.is_file():
            yield root  # the indexer checks it still is what was added (``within``)
            continue
        if not root.is_dir():
            continue  # a root that vanished: its documents leave the index
        inside = [real_root(root)]
        if not within(root, inside):  # the folder itself was swapped for a link
            unreadable.append((root, outside_reason(root)))
            continue
        for folder, dirs, names in os.walk(root, onerror=failed):
            kept = []
            for name in sorted(d for d in dirs if not d.startswith(".")):
                sub = os.path.join(folder, name)
                if _is_link(sub) or not within(sub, inside):
                    if not within(sub, inside):
                        unreadable.append((Path(sub), outside_reason(sub)))
                    continue
                kept.append(name)
            dirs[:] = kept
            for filename in sorted(names):
                if not filename.startswith("."):
                    yield Path(folder) / filename
