"""The fast subset (tests/fast.py): the mark in each file, and the hook that reads it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.fast import holds_fast_file, is_fast_file, is_test_file

pytestmark = pytest.mark.fast

TESTS = Path(__file__).resolve().parents[1]
_NOT_FAST = {"slow", "gpu", "packaging"}


def _marks(tree: ast.AST) -> set[str]:
    """The names of the marks a module's code applies (``pytest.mark.X``, ``mark.X``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (
            (isinstance(node.value, ast.Attribute) and node.value.attr == "mark")
            or (isinstance(node.value, ast.Name) and node.value.id == "mark")
        ):
            found.add(node.attr)
    return found


def _test_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("test_*.py") if is_test_file(path))


def test_the_hook_sees_every_fast_mark_and_nothing_else() -> None:
    # A file marked another way (``from pytest import mark``) would silently leave the
    # subset: with -m fast the hook would not even import it.
    unseen, needless = [], []
    for path in _test_files():
        text = path.read_bytes()
        marked = b"fast" in text and "fast" in _marks(ast.parse(text))
        if marked and not is_fast_file(path):
            unseen.append(path.relative_to(TESTS).as_posix())
        if is_fast_file(path) and not marked:
            needless.append(path.relative_to(TESTS).as_posix())
    assert unseen == []
    assert needless == []


def test_a_fast_file_holds_only_fast_tests() -> None:
    # The mark is on the whole module: a slow, gpu or packaging test in it would also be
    # fast, and the developer's minute-long check would load a real model.
    mixed = {
        path.relative_to(TESTS).as_posix(): sorted(_marks(ast.parse(path.read_bytes())) & _NOT_FAST)
        for path in _test_files()
        if is_fast_file(path)
    }
    assert {name: marks for name, marks in mixed.items() if marks} == {}
    assert len(mixed) >= 40  # the subset spans the pure parts of every feature


def test_with_dash_m_fast_only_folders_holding_a_fast_file_are_entered(tmp_path: Path) -> None:
    (tmp_path / "quick" / "deeper").mkdir(parents=True)
    (tmp_path / "quick" / "deeper" / "test_a.py").write_text("pytestmark = pytest.mark.fast\n")
    (tmp_path / "window").mkdir()
    (tmp_path / "window" / "test_b.py").write_text("pytestmark = pytest.mark.slow\n")
    assert holds_fast_file(tmp_path / "quick")
    assert not holds_fast_file(tmp_path / "window")
    assert is_fast_file(tmp_path / "quick" / "deeper" / "test_a.py")
    assert not is_fast_file(tmp_path / "window" / "test_b.py")
