"""What one listing of the installed-models index costs, parsed once vs on every call.

The Models screen, /v1/models and every resolve list installed models; before, each
listing parsed installed.json again and checked every file. Baseline, same run and same
index: the parse forced on each call (the cached parse dropped first).

Run:  .venv/bin/python tests/benchmarks/bench_installed_index.py [MODELS]
Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.catalog._installed import InstalledIndex, InstalledModel

CALLS = 200


def main(count: int) -> None:
    """Print the mean time of ``all()`` on an index of ``count`` downloaded models."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        index = InstalledIndex(root / "installed.json", root / "models")
        for i in range(count):
            path = root / "models" / "org" / f"repo{i}" / f"m{i}-Q4_K_M.gguf"
            path.parent.mkdir(parents=True)
            path.write_bytes(b"GGUF")
            index.add(
                InstalledModel(
                    id=f"m{i}", files=(str(path),), size=4, sha256=("0" * 64,), source="hub"
                )
            )
        started = time.perf_counter()
        for _ in range(CALLS):
            index.all()
        cached = (time.perf_counter() - started) / CALLS
        started = time.perf_counter()
        for _ in range(CALLS):
            index._parsed = None  # the baseline: parse (and check every file) each time
            index.all()
        parsed = (time.perf_counter() - started) / CALLS
    print(
        f"{count}-model index, mean of {CALLS} listings: {cached * 1e3:.3f} ms parsed once, "
        f"{parsed * 1e3:.3f} ms parsing on every call"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
