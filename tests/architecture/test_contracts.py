"""The architecture contracts cover the whole package: a new top-level module of
``desktop/``, or a new module of a folder with its own order, that the contracts do not
name would escape the layering."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

REPO = Path(__file__).resolve().parents[2]


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def _children(package: str, prefix: str) -> set[str]:
    names = set()
    for path in (REPO / package.replace(".", "/")).iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            names.add(f"{prefix}{path.name}")
        elif path.suffix == ".py" and path.stem not in ("__init__", "__main__"):
            names.add(f"{prefix}{path.stem}")
    return names


def _named(contract: dict[str, object]) -> set[str]:
    layers = contract["layers"]
    assert isinstance(layers, list)
    return {part.strip() for layer in layers for part in str(layer).split("|")}


def test_every_top_level_module_has_a_layer() -> None:
    (house,) = [c for c in _contracts() if c["type"] == "layers" and "containers" not in c]
    missing = sorted(_children("desktop", "desktop.") - _named(house) - {"desktop.__main__"})
    assert not missing, f"add these to the Layers contract in pyproject.toml: {missing}"


def test_every_module_of_an_ordered_folder_has_a_layer() -> None:
    ordered = [c for c in _contracts() if c["type"] == "layers" and "containers" in c]
    assert {name for c in ordered for name in c["containers"]} >= {  # type: ignore[attr-defined]
        "desktop.base",
        "desktop.root",
        "desktop.ui",
        "desktop.engine",
    }
    for contract in ordered:
        (container,) = contract["containers"]  # type: ignore[misc]
        missing = sorted(_children(container, "") - _named(contract))
        assert not missing, f"add these to {contract['name']!r} in pyproject.toml: {missing}"


def test_qt_and_llama_contracts_deny_by_default() -> None:
    forbidden = {c["name"]: c for c in _contracts() if c["type"] == "forbidden"}
    qt = next(c for name, c in forbidden.items() if "PySide6" in c["forbidden_modules"])
    llama = next(c for name, c in forbidden.items() if "llama_cpp" in c["forbidden_modules"])
    assert qt["source_modules"] == ["desktop"]
    assert llama["source_modules"] == ["desktop"]
    assert all(rule.startswith("desktop.ui") for rule in qt["ignore_imports"])
    # One door: the module that sets llama.cpp's OpenMP spin count before it loads.
    assert llama["ignore_imports"] == ["desktop.engine._llama_cpp -> llama_cpp"]


def test_outside_the_engine_only_its_face_is_imported() -> None:
    forbidden = {c["name"]: c for c in _contracts() if c["type"] == "forbidden"}
    face = forbidden["Outside desktop.engine, only its face is imported"]
    assert face["forbidden_modules"] == ["desktop.engine.**"]
    # Every other top-level module is a source, so a new package is covered the day it lands.
    others = (_children("desktop", "desktop.") | {"desktop.__main__"}) - {"desktop.engine"}
    assert set(face["source_modules"]) == others  # type: ignore[arg-type]
