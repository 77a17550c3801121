"""File names as text the database can hold, and back.

On Linux a file name is bytes; one that is not UTF-8 reaches Python with its odd bytes
as lone surrogates (``surrogateescape``), which SQLite refuses. Such a name is stored
with those bytes written as ``\\xNN`` and turned back into the real name when opened.
Names that are valid text (nearly all) are stored exactly as they are.
"""

from __future__ import annotations

import os
import re
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
