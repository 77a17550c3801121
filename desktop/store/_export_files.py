"""The attachment files written beside a chat export, and read back by an import.

An export ``chat.md`` or ``chat.json`` names its pictures and files as
``chat-attachments/<sha256 prefix>-<name>``; this writes them there and reads them back,
never outside that folder (an edited export could name ``../../etc/passwd``).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from desktop.base.config import user_path
from desktop.base.errors import InvalidRequest
from desktop.store._chat_export import ReadFile, attachments_folder

MAX_ATTACHMENT_BYTES = 256 * 1024 * 1024  # a bigger "attachment" is not one we wrote


def folder_for(export: Path) -> str:
    """The relative folder name an export at ``export`` names its attachments under."""
    return attachments_folder(export.name)


def write_beside(export: Path, files: dict[str, bytes]) -> Path | None:
    """Write ``files`` into the attachments folder beside ``export``; the folder, or None
    when there was nothing to write. InvalidRequest (nothing half-said) on a disk error."""
    if not files:
        return None
    folder = user_path(export).parent / folder_for(export)
    try:
        folder.mkdir(exist_ok=True)
        for name, data in files.items():
            target = folder / name
            if target.is_file() and target.stat().st_size == len(data):
                continue  # the same content (the name holds its hash): already there
            tmp = folder / f".{name}.part"
            with tmp.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
    except OSError as exc:
        raise InvalidRequest(
            f"cannot write the attachments to {folder} ({exc.strerror or exc})"
        ) from None
    return folder


def reader_beside(export: Path) -> ReadFile:
    """Reads a file an export at ``export`` names, only from inside its attachments folder."""
    base = user_path(export).resolve().parent

    def read(name: str) -> bytes | None:
        parts = PurePosixPath(name).parts
        if (
            len(parts) != 2
            or any(p in ("", ".", "..") for p in parts)
            or PurePosixPath(name).is_absolute()
        ):
            return None
        path = (base / parts[0] / parts[1]).resolve()
        if path.parent.parent != base:  # a link out of the folder
            return None
        try:
            if not path.is_file() or path.stat().st_size > MAX_ATTACHMENT_BYTES:
                return None
            return path.read_bytes()
        except OSError:
            return None

    return read
