"""One size formatter and one file hash for every screen and command."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from desktop.base.filebytes import format_bytes, sha256_file

pytestmark = pytest.mark.fast


def test_sizes_read_in_decimal_units_and_memory_in_binary_ones() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(999) == "999 B"
    assert format_bytes(463_900) == "463.9 KB"
    assert format_bytes(999_960) == "1.0 MB"  # not "1000.0 KB"
    assert format_bytes(4_200_000_000) == "4.2 GB"
    assert format_bytes(3 * 10**15) == "3000.0 TB"
    # An 8 GiB card and 16 GiB of RAM read as their makers sell them.
    assert format_bytes(8 * 1024**3, memory=True) == "8.0 GiB"
    assert format_bytes(512 * 1024**2, memory=True) == "512.0 MiB"


def test_file_hash_matches_hashlib_across_blocks(tmp_path: Path) -> None:
    big = tmp_path / "model.gguf"
    data = bytes(range(256)) * (5 * 4096 + 7)  # over one 4 MiB read block
    big.write_bytes(data)
    assert sha256_file(big) == hashlib.sha256(data).hexdigest()
