"""Planned against measured memory of a real-size model, loaded once on this CPU.

Run: .venv/bin/python -m tests.benchmarks.bench_real_shape_memory --shape glm4-9b
     [--dir DIR] [--ctx 8192] [--parallel 4] [--n-cpu-moe N] [--json FILE]

Writes the shape's GGUF (``tests/fixtures/real_shape.py``: a sparse file, holes where
the values do not matter) into ``--dir``, asks the fit planner what the load needs
(``fit_model`` on this machine's hardware, the CPU repack types of this llama.cpp
build), then loads it in a child process through EdgeDesk's own engine (the
options the worker would load it with), runs one decode, and reads the child's peak
resident memory (``ru_maxrss``), which counts the mapped file's pages, llama.cpp's CPU
repack copy, the KV cache and compute buffers, and the interpreter with its libraries,
and the buffers llama.cpp reports allocating (its log). The peak RSS after one decode is
a lower bound: KV cells not yet written and mapped expert pages no token has read yet
are not resident (they become so with use); llama.cpp's buffers are what the planner
plans for. The file is deleted afterwards.

Loads of this size take the machine's memory: on a shared machine run this under
``flock /work/bigmem.lock`` (one big load at a time).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from desktop.base.defaults import DEFAULT_PARALLEL, WORKER_PROCESS_BYTES
from desktop.catalog._fit import detect_hardware, fit_model
from desktop.catalog._gguf_info import read_gguf
from desktop.engine._offload import repack_types
from tests.fixtures.real_shape import SHAPES, write_real_shape

GIB = 1024**3


def _load(path: str, ctx: int, parallel: int, cache: str, n_cpu_moe: int, out: Any) -> None:
    """Child: load, decode once, report the peak RSS, llama.cpp's model size and the
    buffers its log names ("CPU_REPACK model buffer size = ... MiB")."""
    import ctypes
    import re

    import llama_cpp

    from desktop.engine._llama import LlamaEngine
    from desktop.engine._native import LoadOptions

    lines: list[str] = []

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def keep(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        lines.append(text.decode("utf-8", "replace"))

    llama_cpp.llama_log_set(keep, ctypes.c_void_p(0))
    started = time.perf_counter()
    engine = LlamaEngine(
        Path(path),
        LoadOptions(context_length=ctx, parallel=parallel, cache_type=cache, n_cpu_moe=n_cpu_moe),
    )
    load_s = time.perf_counter() - started
    model_size = int(llama_cpp.llama_model_size(engine._model.model))
    engine.close()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    found = (
        re.search(r"(\S+) (?:model|KV|compute) buffer size =\s+([\d.]+) MiB", x) for x in lines
    )
    buffers = [f"{m.group(1)} {m.group(2)} MiB" for m in found if m is not None]
    out.put(
        {
            "peak_rss_bytes": peak_kib * 1024,
            "load_s": load_s,
            "model_size": model_size,
            "buffers": buffers,
        }
    )


def measure(shape: str, folder: Path, ctx: int, parallel: int, n_cpu_moe: int) -> dict[str, Any]:
    """The plan and the measured peak for ``shape`` (see the module docstring)."""
    path = folder / f"real-shape-{shape}.gguf"
    started = time.perf_counter()
    write_real_shape(path, shape)
    written_s = time.perf_counter() - started
    try:
        info = read_gguf(path)
        hardware = detect_hardware(repack_probe=repack_types)
        plan = fit_model(
            info,
            hardware,
            gpu_offload=False,
            context_length=ctx,
            parallel=parallel,
            process_bytes=WORKER_PROCESS_BYTES,
        )
        queue: Any = multiprocessing.get_context("spawn").Queue()
        child = multiprocessing.get_context("spawn").Process(
            target=_load, args=(str(path), ctx, parallel, plan.cache_type, n_cpu_moe, queue)
        )
        child.start()
        result = queue.get()
        child.join()
    finally:
        path.unlink(missing_ok=True)
    measured = int(result["peak_rss_bytes"])
    return {
        "shape": shape,
        "file_bytes": info.file_bytes,
        "context_length": ctx,
        "parallel": parallel,
        "cache_type": plan.cache_type,
        "repack_types": sorted(hardware.repack_types),
        "plan_bytes": plan.estimated_bytes,
        "plan_repack_bytes": plan.repack_bytes,
        "plan_without_repack_bytes": plan.estimated_bytes - plan.repack_bytes,
        "measured_peak_rss_bytes": measured,
        "plan_over_measured": plan.estimated_bytes / measured,
        "llama_model_size": result["model_size"],
        "llama_buffers": result["buffers"],
        "load_s": result["load_s"],
        "write_s": written_s,
        "where": plan.where(),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure one shape and print (and with --json, write) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), required=True)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL)
    parser.add_argument("--n-cpu-moe", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        row = measure(args.shape, Path(folder), args.ctx, args.parallel, args.n_cpu_moe)
    for key, value in row.items():
        shown = f"{value / GIB:.2f} GiB" if key.endswith("bytes") else value
        print(f"{key:28} {shown}")
    if args.json:
        args.json.write_text(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
