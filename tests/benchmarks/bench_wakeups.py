"""Wake-ups per token: what a streamed token costs the scheduler, worker vs in-process.

Run: .venv/bin/python -m tests.benchmarks.bench_wakeups [--tokens 128] [--rounds 3]
     [--model FILE]

On a machine with as many cores as llama.cpp has threads (2 on the reference laptop
and the CI runner), every other thread that wakes while a token decodes takes a core
from one of llama.cpp's threads, and the graph waits for it at the next barrier. This
counts those wake-ups, a figure that does not depend on how busy the machine is: the
context switches of every thread of this process and of the worker, and the CPU time
of each, per streamed token, for the same model in this process and in a worker,
interleaved round by round. Each busy thread is listed as name or thread id:
woken / preempted per token / CPU ms per token (Python threads of this process by name;
the worker's by id: its two busiest are llama.cpp's decode threads).

It found issue 47's worker cost: on the Moonlight-16B-A3B shape the worker's two decode
threads used twice the CPU per token of the same engine in-process (libgomp spun 3,000
times at every barrier there; see ``desktop/engine/_llama_cpp.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.engine._loader import load_engine
from desktop.engine._types import GenerationParams, LocalPlan, ModelSpec
from desktop.engine._worker.start import start_worker
from tests.benchmarks.bench_vs_llama_server import gemma_file

PROMPT = "The lighthouse keeper's log, day one. The sea was"


def _threads(pid: int) -> dict[int, tuple[int, int, int]]:
    """Each thread of ``pid``: (voluntary, involuntary context switches, CPU ticks)."""
    out: dict[int, tuple[int, int, int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
            stat = (task / "stat").read_text()
        except OSError:
            continue
        counts = {
            line.split(":")[0]: int(line.split()[1])
            for line in status.splitlines()
            if "ctxt_switches" in line
        }
        fields = stat.rsplit(")", 1)[1].split()
        out[int(task.name)] = (
            counts["voluntary_ctxt_switches"],
            counts["nonvoluntary_ctxt_switches"],
            int(fields[11]) + int(fields[12]),
        )
    return out


def _delta(
    before: dict[int, tuple[int, int, int]], after: dict[int, tuple[int, int, int]]
) -> dict[int, tuple[int, int, int]]:
    zero = (0, 0, 0)
    return {
        tid: (
            v - before.get(tid, zero)[0],
            n - before.get(tid, zero)[1],
            t - before.get(tid, zero)[2],
        )
        for tid, (v, n, t) in after.items()
    }


def _names() -> dict[int, str]:
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def measure(kind: str, engine: Any, tokens: int) -> dict[str, float]:
    """One single-stream completion of ``tokens`` tokens: switches and CPU per token."""
    params = GenerationParams(max_tokens=tokens, temperature=0.0)
    for _ in engine.stream_completion(PROMPT, params):  # warm: prompt cached, pages in
        pass
    pids = {"app": os.getpid()}
    if getattr(engine, "pid", None) is not None:
        pids["worker"] = engine.pid
    before = {name: _threads(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    made = 0
    for chunk in engine.stream_completion(PROMPT, params):
        if chunk.usage is not None:
            made = chunk.usage.completion_tokens
    seconds = time.perf_counter() - started
    after = {name: _threads(pid) for name, pid in pids.items()}
    made = max(made, 1)
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    names = _names()
    figures: dict[str, float] = {"tok_s": made / seconds}
    parts = []
    for name in pids:
        delta = _delta(before[name], after[name])
        figures[f"{name}_voluntary"] = sum(v for v, _, _ in delta.values()) / made
        figures[f"{name}_preempted"] = sum(n for _, n, _ in delta.values()) / made
        figures[f"{name}_cpu_ms"] = sum(t for _, _, t in delta.values()) * tick_ms / made
        busiest = sorted(delta.items(), key=lambda item: -(item[1][0] + item[1][1]))[:6]
        shown = ", ".join(
            f"{names.get(tid, tid) if name == 'app' else tid}:"
            f"{v / made:.1f}/{n / made:.1f}/{t * tick_ms / made:.1f}ms"
            for tid, (v, n, t) in busiest
            if v + n
        )
        parts.append(
            f"{name} {figures[f'{name}_voluntary']:.1f} woke + "
            f"{figures[f'{name}_preempted']:.1f} preempted a token, "
            f"{figures[f'{name}_cpu_ms']:.1f} ms CPU [{shown}]"
        )
    print(
        f"  {kind:<10} {made} tokens {figures['tok_s']:.1f} tok/s · " + " · ".join(parts),
        flush=True,
    )
    return figures


def main() -> None:
    """Interleaved rounds of both kinds, then the medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--only", choices=["in-process", "worker"], default=None)
    args = parser.parse_args()
    model = args.model or gemma_file()
    spec = ModelSpec(model, "model", context_length=4096, plan=LocalPlan(parallel=1))
    logs = Path(tempfile.mkdtemp())
    kinds = [args.only] if args.only else ["in-process", "worker"]
    starts: dict[str, Callable[[], Any]] = {
        "in-process": lambda: load_engine(spec),
        "worker": lambda: start_worker(spec, log_path=logs / "model.log"),
    }
    engines = {kind: starts[kind]() for kind in kinds}
    rows: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    try:
        for number in range(args.rounds):
            print(f"round {number + 1}", flush=True)
            order = kinds if number % 2 == 0 else kinds[::-1]
            for kind in order:
                rows[kind].append(measure(kind, engines[kind], args.tokens))
    finally:
        for engine in engines.values():
            engine.close()
    for kind in kinds:
        keys = sorted(rows[kind][0])
        print(
            f"{kind} medians: "
            + " · ".join(f"{k} {statistics.median(r[k] for r in rows[kind]):.2f}" for k in keys)
        )


if __name__ == "__main__":
    main()
