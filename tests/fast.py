"""The fast subset (``pytest -m fast``, ``./scripts/test.sh --fast``): which files, and how.

A developer's minute-long check between edits: pure logic, wire formats, contracts and
the store, no model decode beyond the tiny random ones, no window, no child process.
A test file joins the subset by saying so itself, beside its imports::

    pytestmark = pytest.mark.fast

(or with ``pytest.mark.fast`` in a ``pytestmark`` list). A fast file holds only fast
tests: none of its tests is marked ``slow``, ``gpu`` or ``packaging``
(``tests/suite/test_fast_subset.py`` checks that, and that every fast mark is spelled so
that this hook sees it). With ``-m fast`` (alone, or ``-m "fast and ..."``) only files
whose text names ``pytest.mark.fast`` are collected, and only folders holding one:
importing the rest of the suite (Qt, the servers) takes longer than running the subset,
and reading the files' bytes takes a few milliseconds.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

#: What a fast file's text holds; the hook decides from the bytes, without importing.
FAST_MARK = b"pytest.mark.fast"


def _fast_only(config: pytest.Config) -> bool:
    """Whether ``-m`` selects nothing but fast tests (then the rest need not be imported)."""
    expression = " ".join(str(config.getoption("markexpr") or "").split())
    return expression == "fast" or expression.startswith("fast and ")


def is_test_file(path: Path) -> bool:
    """Whether pytest collects ``path`` as a test module (the default ``test_*.py``)."""
    return path.name.startswith("test_") and path.suffix == ".py"


@functools.cache
def is_fast_file(path: Path) -> bool:
    """Whether the test file at ``path`` marks its tests ``fast`` (read, not imported)."""
    return FAST_MARK in path.read_bytes()


@functools.cache
def holds_fast_file(folder: Path) -> bool:
    """Whether ``folder`` or a folder under it holds a fast test file."""
    with os.scandir(folder) as entries:
        found = sorted(Path(entry.path) for entry in entries)
    return any(
        (is_test_file(path) and path.is_file() and is_fast_file(path))
        or (path.is_dir() and not path.name.startswith((".", "__")) and holds_fast_file(path))
        for path in found
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``-m fast``: skip every folder without a fast file, and every other test file."""
    if not _fast_only(config):
        return None
    if collection_path in (config.rootpath, config.rootpath / "tests"):
        return None
    if collection_path.is_dir():
        return not holds_fast_file(collection_path) or None
    if is_test_file(collection_path):
        return not is_fast_file(collection_path) or None
    return None
