"""Migrations are frozen: they use no live module of the app, whose code may change
after a migration shipped and would then migrate an old database differently."""

from __future__ import annotations

import ast
from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / "desktop" / "store"


def _desktop_imports(path: Path) -> set[str]:
    """Every ``desktop...`` module a file imports, at the top or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module or "")
        elif isinstance(node, ast.ImportFrom):  # relative to the package desktop.store
            base = "desktop.store".rsplit(".", node.level - 1)[0]
            names.add(f"{base}.{node.module}" if node.module else base)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name == "desktop" or name.startswith("desktop.")}


def test_migrations_import_only_their_own_frozen_helpers() -> None:
    files = [STORE / "_migrations.py", *sorted(STORE.glob("_migration_*.py"))]
    assert len(files) > 1  # the frozen helpers of migration 14 are among them
    for path in files:
        live = {
            name
            for name in _desktop_imports(path)
            if not name.startswith("desktop.store._migration_")
        }
        assert not live, f"{path.name} imports live modules {sorted(live)}: copy what it needs"
