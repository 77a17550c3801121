"""Time and peak memory of reading two hostile files for a document collection.

A 45 MB text that is one line (row 13 of issue 18: minutes and 3 GB before lines were
cut), and a 1 MB DOCX whose picture unpacks to 1 GiB of zeros (row 5: 2 GB before the
unpacked size was checked). Each file is loaded (and the text chunked, with a counter
of ~4 characters per token instead of a model) in a fresh process; peak RSS is that
process's (Linux: VmHWM).

Run:  .venv/bin/python tests/benchmarks/bench_hostile_files.py
Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.robustness.test_documents import _docx_with_zeros  # noqa: E402

MEASURE = """
import sys, time
from pathlib import Path
from desktop.retrieval import _loaders as loaders
from desktop.retrieval._chunking import chunk_blocks
start = time.perf_counter()
try:
    blocks = loaders.load(Path(sys.argv[1]))
    chunks = chunk_blocks(blocks, lambda texts: [max(1, len(t) // 4) for t in texts])
    outcome = f"{len(chunks)} chunks"
except loaders.SkipFile as exc:
    outcome = f"skipped: {exc.reason}"
# VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork and exec.
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM")) / 1024
print(f"{time.perf_counter() - start:6.1f} s  peak RSS {peak:5.0f} MB  {outcome}")
"""


def main() -> None:
    """Write the two files and print one line of figures for each."""
    with tempfile.TemporaryDirectory() as folder:
        text = Path(folder) / "one-line.txt"
        text.write_text("word " * 9_000_000)
        bomb = _docx_with_zeros(Path(folder) / "bomb.docx", 1 << 30)
        for path in (text, bomb):
            size = path.stat().st_size / 1e6
            print(f"{path.name:14} {size:5.1f} MB: ", end="", flush=True)
            subprocess.run([sys.executable, "-c", MEASURE, str(path)], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
