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


def walk(roots: Sequence[Path], unreadable: list[tuple[Path, str]]) -> Iterator[Path]:
    """Files under the roots; hidden files and folders (.git, .venv) are left out.

    A folder that cannot be listed (no permission, a path over the system's limit) is
    added to ``unreadable`` with why, so it is reported as skipped, not silently missed.
    """

    def failed(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else Path("?")
        unreadable.append((where, f"cannot read folder ({exc.strerror or exc})"))

    for root in roots:
        if root.is_file():
            yield root
            continue
        if not root.is_dir():
            continue  # a root that vanished: its documents leave the index
        for folder, dirs, names in os.walk(root, onerror=failed):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for filename in sorted(names):
                if not filename.startswith("."):
                    yield Path(folder) / filename
