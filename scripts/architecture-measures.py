#!/usr/bin/env python3
"""Print the house's structure measures that issue #51 tracks, before and after a change.

- cross-feature imports of a feature's insides: an import in ``desktop/<a>/`` of
  ``desktop.<b>.<anything>`` (b != a) that is not ``desktop.<b>`` itself, its face;
- the modules of ``desktop/ui`` and ``desktop/cli`` that take the whole ``AppContext``;
- ``dict[str, Any]`` written in ``desktop/``;
- test files directly in each test folder (a flat folder of many files is hard to map
  onto the code it tests).

Only the standard library; run from the repository root: ``python scripts/architecture-measures.py``.
"""

from __future__ import annotations

import ast
import collections
import sys
from pathlib import Path


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names.append(target)
            # ``from desktop.engine import worker`` imports a submodule, not a name
            for alias in node.names:
                candidate = root_dir().parent / Path(*f"{target}.{alias.name}".split("."))
                if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
                    names.append(f"{target}.{alias.name}")
    return names


def root_dir() -> Path:
    return Path("desktop").resolve()


def main() -> int:
    root = root_dir()
    if not root.is_dir():
        print("run from the repository root", file=sys.stderr)
        return 2
    inside: collections.Counter[str] = collections.Counter()
    pairs = 0
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        feature = module.split(".")[1] if module.count(".") else ""
        for name in set(_imports(path, module)):
            parts = name.split(".")
            if parts[0] != "desktop" or len(parts) < 3 or parts[1] == feature:
                continue
            inside[f"desktop.{parts[1]}"] += 1
            pairs += 1
    print(f"cross-feature imports of insides: {pairs} (importing module, inner module) pairs")
    for feature, count in inside.most_common():
        print(f"  into {feature}: {count}")

    users = []
    for folder in ("ui", "cli"):
        for path in sorted((root / folder).rglob("*.py")):
            if "AppContext" in path.read_text(encoding="utf-8"):
                users.append(str(path.relative_to(root.parent)))
    print(f"AppContext users in desktop/ui and desktop/cli: {len(users)}")

    any_dicts = sum(
        p.read_text(encoding="utf-8").count("dict[str, Any]") for p in root.rglob("*.py")
    )
    print(f"dict[str, Any] in desktop/: {any_dicts}")

    print("test files directly in each test folder (10 or more):")
    tests = Path("tests")
    for folder in sorted([tests, *[p for p in tests.rglob("*") if p.is_dir()]]):
        count = len(list(folder.glob("test_*.py")))
        if count >= 10:
            print(f"  {folder}/: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
