"""The fast subset's list (tests/fast.py) names test files that exist."""

from __future__ import annotations

from pathlib import Path

from tests.fast import FAST_FILES

ROOT = Path(__file__).resolve().parents[2]


def test_every_listed_file_is_a_test_file_that_exists() -> None:
    # A file renamed or moved (the folder regroup) would silently leave the subset.
    missing = sorted(name for name in FAST_FILES if not (ROOT / name).is_file())
    assert missing == []
    assert all(Path(name).name.startswith("test_") for name in FAST_FILES)
