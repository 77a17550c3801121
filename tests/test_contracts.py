"""The architecture contracts cover the whole package: a new top-level module of
``desktop/`` that the Layers contract does not name would escape the layering."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def _top_level_modules() -> set[str]:
    names = set()
    for path in (REPO / "desktop").iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            names.add(f"desktop.{path.name}")
        elif path.suffix == ".py" and path.stem != "__init__":
            names.add(f"desktop.{path.stem}")
    return names


def test_every_top_level_module_has_a_layer() -> None:
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    named = {part.strip() for layer in layers["layers"] for part in str(layer).split("|")}
    missing = sorted(_top_level_modules() - named)
    assert not missing, f"add these to the Layers contract in pyproject.toml: {missing}"


def test_qt_and_llama_contracts_deny_by_default() -> None:
    forbidden = {c["name"]: c for c in _contracts() if c["type"] == "forbidden"}
    qt = next(c for name, c in forbidden.items() if "PySide6" in c["forbidden_modules"])
    llama = next(c for name, c in forbidden.items() if "llama_cpp" in c["forbidden_modules"])
    assert qt["source_modules"] == ["desktop"]
    assert llama["source_modules"] == ["desktop"]
    assert all(rule.startswith("desktop.ui") for rule in qt["ignore_imports"])
    assert all(rule.startswith("desktop.engine") for rule in llama["ignore_imports"])
