"""Bytes as EdgeDesk shows and checks them: one size formatter, one file hash.

Sizes of files and downloads are decimal (1 GB = 10^9 bytes, as disks and the Hub count
them); memory (RAM, VRAM) is binary (GiB), as operating systems and GPU makers count it,
so an 8 GiB card reads "8.0 GiB", not "8.6 GB".
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol

HASH_BLOCK = 4 * 1024 * 1024
_DECIMAL = (1000, ("B", "KB", "MB", "GB", "TB"))
_BINARY = (1024, ("B", "KiB", "MiB", "GiB", "TiB"))


class Hasher(Protocol):
    """What ``hash_into`` feeds: any ``hashlib`` object."""

    def update(self, data: bytes, /) -> None:
        """Add ``data`` to the digest."""
        ...


def format_bytes(n: float, *, memory: bool = False) -> str:
    """``n`` bytes as people read them ("512 B", "463.9 KB", "4.2 GB"; "7.8 GiB" for memory)."""
    step, units = _BINARY if memory else _DECIMAL
    value = float(n)
    for unit in units[:-1]:
        if round(abs(value), 1) < step:  # 999.96 KB reads "1.0 MB", not "1000.0 KB"
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= step
    return f"{value:.1f} {units[-1]}"


def hash_into(path: Path, hasher: Hasher) -> int:
    """Feed the file at ``path`` into ``hasher`` block by block; returns its length."""
    size = 0
    with path.open("rb") as handle:
        while block := handle.read(HASH_BLOCK):
            hasher.update(block)
            size += len(block)
    return size


def sha256_file(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex), read in blocks."""
    hasher = hashlib.sha256()
    hash_into(path, hasher)
    return hasher.hexdigest()
