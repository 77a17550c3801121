"""What the worker process costs: the same model in this process and in a worker.

Run: .venv/bin/python -m tests.benchmarks.bench_worker [--rounds 3]

Real Gemma 3 270M, one engine of each kind loaded the same way (``load_engine`` here,
``start_worker`` for the worker), measured in one run, interleaved round by round so
the machine's load falls on both alike. Printed per round: start-up (process start and
load until ready), single-stream tok/s and time to first token, 4 clients' aggregate
tok/s, the per-call cost of the pipe (a 1-token call's round trip beside the
in-process one), and the memory the model holds (the worker's resident set; in this
process, what it grew by, so the first in-process round also counts llama.cpp's import). The last line gives each figure's median ratio, worker ÷ in-process.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from desktop.base.defaults import WORKER_PROCESS_BYTES
from desktop.engine._loader import load_engine
from desktop.engine._types import ChatCall, GenerationParams, LocalPlan, Message, ModelSpec
from desktop.engine._worker.start import start_worker
from tests.benchmarks.bench_vs_llama_server import gemma_file

ASK = [Message("user", "Write a long story about a lighthouse keeper and the sea.")]
GEN = GenerationParams(max_tokens=128, temperature=0.0)
CLIENTS = 4


def _stream(engine: Any, messages: list[Message]) -> tuple[float, int, float]:
    """(time to first token, tokens, seconds) of one streamed answer."""
    started = time.perf_counter()
    first = 0.0
    tokens = 0
    for chunk in engine.stream_chat(ChatCall.of(messages, GEN)):
        if chunk.text and not first:
            first = time.perf_counter() - started
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
    return first, tokens, time.perf_counter() - started


def _aggregate(engine: Any) -> float:
    """Tokens per second of ``CLIENTS`` answers streamed at once."""
    counts: list[int] = []
    lock = threading.Lock()

    def one(n: int) -> None:
        _, tokens, _ = _stream(engine, [Message("user", f"Story number {n}: {ASK[0].content}")])
        with lock:
            counts.append(tokens)

    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - started)


def _round_trip_us(engine: Any, repeat: int = 200) -> float:
    """Median microseconds of a tiny call (tokenize one word): the pipe's cost per call."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        engine.tokenize("hi")
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def _rss_mib(engine: Any, before: int) -> float:
    """Memory the engine holds: its worker's resident set, or what this process grew by."""
    pid = getattr(engine, "pid", None)
    if pid is not None:
        return float(psutil.Process(pid).memory_info().rss / 2**20)
    return float((psutil.Process().memory_info().rss - before) / 2**20)


def measure(kind: str, start: Callable[[], Any]) -> dict[str, float]:
    """One engine of ``kind``: its figures, then it is closed."""
    before = psutil.Process().memory_info().rss
    started = time.perf_counter()
    engine = start()
    figures = {"start_s": time.perf_counter() - started}
    try:
        _stream(engine, ASK)  # warm
        ttft, tokens, seconds = _stream(engine, ASK)
        figures["ttft_s"] = ttft
        figures["single_tok_s"] = tokens / max(seconds - ttft, 1e-9)
        figures["four_tok_s"] = _aggregate(engine)
        figures["call_us"] = _round_trip_us(engine)
        figures["rss_mib"] = _rss_mib(engine, before)
    finally:
        engine.close()
    print(
        f"  {kind:<10} start {figures['start_s']:.2f} s · ttft {figures['ttft_s'] * 1000:.0f} ms"
        f" · 1 stream {figures['single_tok_s']:.1f} tok/s · {CLIENTS} clients "
        f"{figures['four_tok_s']:.1f} tok/s · a call {figures['call_us']:.0f} µs · "
        f"memory {figures['rss_mib']:.0f} MiB",
        flush=True,
    )
    return figures


def main() -> None:
    """Interleaved rounds of both kinds, then the median ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    spec = ModelSpec(gemma_file(), "gemma", context_length=4096, plan=LocalPlan(parallel=CLIENTS))
    logs = Path(tempfile.mkdtemp())
    rows: dict[str, list[dict[str, float]]] = {"in-process": [], "worker": []}
    for number in range(args.rounds):
        print(f"round {number + 1}", flush=True)
        order = ["in-process", "worker"] if number % 2 == 0 else ["worker", "in-process"]
        for kind in order:
            start: Callable[[], Any] = (
                (lambda: load_engine(spec))
                if kind == "in-process"
                else (lambda: start_worker(spec, log_path=logs / "gemma.log"))
            )
            rows[kind].append(measure(kind, start))
    ratios = []
    for key in ("start_s", "ttft_s", "single_tok_s", "four_tok_s", "call_us", "rss_mib"):
        here = statistics.median(r[key] for r in rows["in-process"])
        there = statistics.median(r[key] for r in rows["worker"])
        ratios.append(f"{key} {there / here:.3f}×")
    print("worker ÷ in-process (medians): " + " · ".join(ratios))
    # The worker's own base (its interpreter and libraries): what the fit adds per model.
    base = statistics.median(r["rss_mib"] for r in rows["worker"]) - statistics.median(
        r["rss_mib"] for r in rows["in-process"]
    )
    print(
        f"worker base {base:.0f} MiB (the fit counts WORKER_PROCESS_BYTES, "
        f"{WORKER_PROCESS_BYTES / 2**20:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
