"""Each feature with a public face keeps it: outside code imports only the names its
``__init__`` lists in ``__all__`` (import-linter), its insides are ``_private`` modules,
the face is cheap to import, and what mypy reads under ``TYPE_CHECKING`` is what a
caller gets at run time."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

REPO = Path(__file__).resolve().parents[2]
DESKTOP = REPO / "desktop"
NAME = re.compile(r"Outside desktop\.(\w+), only its face is imported")


def _face_contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    found = {}
    for contract in config["tool"]["importlinter"]["contracts"]:
        match = NAME.fullmatch(str(contract["name"]))
        if match:
            found[match.group(1)] = contract
    return found


FACES = sorted(_face_contracts())
# Third-party packages a face must not load just by being imported (the insides do).
HEAVY = ("numpy", "httpx", "pydantic", "cryptography", "psutil", "sqlite_utils", "filelock")


def _packages() -> set[str]:
    return {p.name for p in DESKTOP.iterdir() if (p / "__init__.py").exists()}


def test_the_first_faces_have_contracts() -> None:
    assert set(FACES) >= {"catalog", "store", "retrieval", "tools"}


@pytest.mark.parametrize("feature", FACES)
def test_a_face_contract_names_every_other_package(feature: str) -> None:
    contract = _face_contracts()[feature]
    assert contract["type"] == "forbidden"
    assert contract["forbidden_modules"] == [f"desktop.{feature}.**"]
    expected = {"desktop.__main__"} | {f"desktop.{p}" for p in _packages() - {feature}}
    assert set(contract["source_modules"]) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("feature", FACES)
def test_the_insides_are_private(feature: str) -> None:
    public = [
        p.relative_to(DESKTOP).as_posix()
        for p in (DESKTOP / feature).iterdir()
        if p.name != "__init__.py"
        and not p.name.startswith("_")
        and (p.suffix == ".py" or (p / "__init__.py").exists())
    ]
    assert not public, f"rename with a leading underscore, or export from the face: {public}"


def _type_checking_names(feature: str) -> dict[str, str]:
    """Each name the face imports under ``if TYPE_CHECKING:`` (as it is bound there: an
    ``as`` name when it has one), with its inside module."""
    tree = ast.parse((DESKTOP / feature / "__init__.py").read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                module = str(statement.module).removeprefix(f"desktop.{feature}.")
                names.update({alias.asname or alias.name: module for alias in statement.names})
    return names


def _inner_names(feature: str) -> dict[str, str]:
    """Face name -> the name inside its module, where they differ (``import x as y``)."""
    tree = ast.parse((DESKTOP / feature / "__init__.py").read_text(encoding="utf-8"))
    return {
        alias.asname: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname
    }


@pytest.mark.parametrize("feature", FACES)
def test_every_name_of_the_face_resolves_to_what_mypy_sees(feature: str) -> None:
    face = importlib.import_module(f"desktop.{feature}")
    exported = face.__all__
    assert exported, "a face lists its contract in __all__"
    assert len(set(exported)) == len(exported)
    typed = _type_checking_names(feature)
    if typed:  # a lazy face: the names mypy reads are the ones loaded on first use
        assert set(typed) == set(exported)
        # name -> inner module (or (inner module, inner name) where the face renames)
        where = {k: v[0] if isinstance(v, tuple) else v for k, v in face._WHERE.items()}
        assert where == typed
    for name in exported:
        value = getattr(face, name)
        if typed:
            inside = importlib.import_module(f"desktop.{feature}.{typed[name]}")
            assert value is getattr(inside, _inner_names(feature).get(name, name))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        face.no_such_name  # noqa: B018 - the lookup is the test


@pytest.mark.parametrize("feature", FACES)
def test_importing_a_face_loads_none_of_its_insides(feature: str) -> None:
    if not _type_checking_names(feature):
        pytest.skip("this face re-exports eagerly: its insides are cheap")
    probe = (
        f"import sys, desktop.{feature}\n"
        f"print(sorted(m for m in sys.modules if m.startswith('desktop.{feature}.')"
        f" or m.split('.')[0] in {HEAVY!r}))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == "[]"


def test_a_face_reads_its_inside_module_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # One helper (desktop/base/faces.py) serves every face: nothing is cached in the face,
    # so a test that replaces a name inside is seen through the face, and dir() lists
    # every exported name before any was read.
    import desktop.catalog
    import desktop.catalog._fit as fit

    def stand_in() -> None:
        return None

    monkeypatch.setattr(fit, "fit_model", stand_in)
    assert desktop.catalog.fit_model is stand_in
    assert set(desktop.catalog.__all__) <= set(dir(desktop.catalog))
    with pytest.raises(AttributeError, match="module 'desktop.catalog' has no attribute 'nope'"):
        desktop.catalog.nope  # noqa: B018 - the lookup is the test
