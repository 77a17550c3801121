"""The broken-models file: a damaged or hand-edited one never stops a model or a command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop.engine._broken import BrokenFile

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    "text",
    [
        b"\x00\xffgarbage{",
        b"[1, 2]",
        b'{"m": {"crashes": "x", "broken": 1}}',
        b'{"m": {"crashes": 3, "broken": "yes"}}',
        b'{"m": 7}',
    ],
    ids=["binary", "a list", "bad count", "bad flag", "not an entry"],
)
def test_a_damaged_file_marks_nothing_and_is_mended_by_the_next_crash(
    tmp_path: Path, text: bytes
) -> None:
    path = tmp_path / "broken-models.json"
    path.write_bytes(text)
    broken = BrokenFile(path)
    assert broken.reason("m") is None
    assert broken.marked() == {}
    assert broken.crashed("m", "aborted", threshold=1) >= 1  # a valid count goes on
    assert BrokenFile(path).reason("m") == "aborted"
    assert broken.clear("m")


def test_a_link_in_its_place_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me")
    path = tmp_path / "broken-models.json"
    os.symlink(elsewhere, path)
    BrokenFile(path).crashed("m", "aborted", threshold=3)
    assert elsewhere.read_text() == "keep me"
    assert not path.is_symlink() and BrokenFile(path).reason("m") is None  # 1 of 3
