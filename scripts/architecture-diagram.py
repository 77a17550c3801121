#!/usr/bin/env python3
"""Draw docs/architecture.svg: the layers, each package's face and who imports whom.

Read from the code itself, so the picture cannot drift from the contracts:
- the rows are the "Layers" contract of pyproject.toml (top row imports downward only);
- a package drawn with a double border shows a public face (an import-linter contract
  "Outside desktop.X, only its face is imported"); its label counts the names in
  ``__all__``;
- an arrow is "imports at least one name from" (ast over every module; imports inside
  functions and TYPE_CHECKING blocks count), thicker for more importing modules.

Needs Graphviz's ``dot``; run from the repository root:
``python3 scripts/architecture-diagram.py`` (writes docs/architecture.svg and .dot).
"""

from __future__ import annotations

import ast
import collections
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

FACE = "Outside desktop.{}, only its face is imported"


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _layers() -> list[list[str]]:
    main = next(c for c in _contracts() if str(c["name"]).startswith("Layers"))
    rows = main["layers"]
    assert isinstance(rows, list)
    return [[p.strip().removeprefix("desktop.") for p in str(row).split("|")] for row in rows]


def _faces() -> dict[str, int]:
    names = {str(c["name"]) for c in _contracts()}
    faces = {}
    for package in Path("desktop").iterdir():
        if package.is_dir() and FACE.format(package.name) in names:
            tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
            exported = next(
                (
                    node.value
                    for node in tree.body
                    if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                ),
                None,
            )
            faces[package.name] = len(exported.elts) if isinstance(exported, ast.List) else 0
    return faces


def _edges() -> collections.Counter[tuple[str, str]]:
    """(importer package, imported package) -> how many modules of the importer."""
    edges: collections.Counter[tuple[str, str]] = collections.Counter()
    for path in Path("desktop").rglob("*.py"):
        parts = path.with_suffix("").parts
        source = parts[1] if len(parts) > 2 else parts[1].removesuffix(".py")
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                bits = name.split(".")
                if bits[0] == "desktop" and len(bits) > 1 and bits[1] != source:
                    targets.add(bits[1])
        for target in targets:
            edges[(source, target)] += 1
    return edges


def dot_text() -> str:
    """The picture in Graphviz's language."""
    faces = _faces()
    lines = [
        "digraph edgedesk {",
        '  graph [rankdir=TB, newrank=true, nodesep=0.25, ranksep=0.55, fontname="Helvetica",'
        ' label="EdgeDesk: layers (rows, top imports down), faces (double border: only'
        ' __all__ is imported from outside), imports (arrows)", labelloc=t, fontsize=13];',
        '  node [shape=box, style="rounded,filled", fillcolor="#f4f6fb", fontname="Helvetica",'
        " fontsize=11];",
        '  edge [color="#7a869a", arrowsize=0.6];',
    ]
    for index, row in enumerate(_layers()):
        lines.append(f"  subgraph row{index} {{ rank=same;")
        for package in row:
            if package in faces:
                label = f"{package}\\nface: {faces[package]} names"
                lines.append(
                    f'    "{package}" [label="{label}", peripheries=2, fillcolor="#e3f1e6"];'
                )
            else:
                lines.append(f'    "{package}";')
        lines.append("  }")
    known = {p for row in _layers() for p in row}
    for (source, target), count in sorted(_edges().items()):
        if source in known and target in known:
            width = 0.6 + min(count, 40) / 10
            lines.append(f'  "{source}" -> "{target}" [penwidth={width:.1f}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write docs/architecture.dot and render docs/architecture.svg."""
    if not Path("desktop").is_dir():
        sys.stderr.write("run from the repository root\n")
        return 2
    text = dot_text()
    Path("docs/architecture.dot").write_text(text, encoding="utf-8")
    dot = shutil.which("dot")
    if dot is None:
        sys.stderr.write("Graphviz's dot is not installed: wrote docs/architecture.dot only\n")
        return 1
    subprocess.run(
        [dot, "-Tsvg", "-o", "docs/architecture.svg", "docs/architecture.dot"], check=True
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
