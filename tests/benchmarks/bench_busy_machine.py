"""Decoding on a busy machine: `edgedesk serve` against llama-server with other processes
competing for the cores.

Run: .venv/bin/python -m tests.benchmarks.bench_busy_machine [--hogs 4] [--rounds 2]
     [--tokens 48] [--llama-server PATH]

Same model (Gemma 3 270M Q4_K_M), same run, all four servers up together and asked in
turn: llama-server at its defaults; EdgeDesk as shipped (its OpenMP workers spin 3,000
times before they sleep, ``GOMP_SPINCOUNT=3000``, see ``desktop/engine/_llama_cpp.py``);
EdgeDesk whose workers sleep at once (``OMP_WAIT_POLICY=PASSIVE``, the default before);
and EdgeDesk with libgomp's default (spin ~300k times, then sleep: before that). Each
is asked for ``--tokens`` tokens of a story (streamed, ``ignore_eos``, temperature 0),
first on the machine as it is, then with ``--hogs`` busy-looping processes beside it.
Printed: each one's decode speed (tokens after the first ÷ the time after it) and the
ratios to llama-server's. Compare the ratios; absolute figures depend on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.benchmarks.bench_vs_llama_server import (
    edgedesk_server,
    gemma_file,
    llama_server,
    peer_binary,
)

PROMPT = [{"role": "user", "content": "Write a long story about a cat."}]
# EdgeDesk as shipped, and as it was before (an empty GOMP_SPINCOUNT is not a count, so
# libgomp keeps its default; EdgeDesk sets nothing when the variable is there).
VARIANTS = {
    "edgedesk": {},
    "edgedesk PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "edgedesk libgomp default": {"GOMP_SPINCOUNT": ""},
}


def _hog(stop: Any) -> None:
    """Keep one core busy until ``stop`` is set (another user's work)."""
    count = 0
    while not stop.is_set():
        for _ in range(100_000):
            count += 1


@contextlib.contextmanager
def hogs(n: int) -> Iterator[None]:
    """``n`` busy-looping processes for the block."""
    stop = multiprocessing.Event()
    procs = [multiprocessing.Process(target=_hog, args=(stop,), daemon=True) for _ in range(n)]
    for proc in procs:
        proc.start()
    try:
        yield
    finally:
        stop.set()
        for proc in procs:
            proc.join()


def decode_speed(url: str, model: str, tokens: int) -> float:
    """Tokens per second after the first token of one streamed answer."""
    first: float | None = None
    pieces = 0
    body = {
        "model": model,
        "max_tokens": tokens,
        "temperature": 0,
        "stream": True,
        "ignore_eos": True,
        "messages": PROMPT,
    }
    with (
        httpx.Client(timeout=900) as client,
        client.stream("POST", f"{url}/v1/chat/completions", json=body) as response,
    ):
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                pieces += 1
                if first is None:
                    first = time.perf_counter()
    end = time.perf_counter()
    return (pieces - 1) / (end - first) if first is not None and pieces > 1 else 0.0


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    """``values`` in the environment while a child is started, as they were after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def main(argv: list[str] | None = None) -> int:
    """Start the servers, measure each in turn without and with hogs, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--hogs", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--llama-server", default=None, metavar="PATH")
    parser.add_argument(
        "--spins",
        default="",
        metavar="N,...",
        help="instead of the PASSIVE and libgomp-default variants, EdgeDesk with each of "
        "these GOMP_SPINCOUNT values (e.g. 100,3000,300000)",
    )
    args = parser.parse_args(argv)
    variants = dict(VARIANTS)
    if args.spins:
        variants = {"edgedesk": {}}
        for count in args.spins.split(","):
            variants[f"edgedesk spin {count.strip()}"] = {"GOMP_SPINCOUNT": count.strip()}
    model = gemma_file()
    work = Path(tempfile.mkdtemp(prefix="edgedesk-busy-"))
    peer = peer_binary(args.llama_server, work / "peer", model)
    print(f"llama-server: {peer.describe()}", flush=True)
    speeds: dict[tuple[str, int], list[float]] = {}
    with contextlib.ExitStack() as stack:
        (work / "peer-run").mkdir()
        servers = {
            "llama-server": stack.enter_context(
                llama_server(peer.path, model, work / "peer-run", slots=None)
            )
        }
        for name, environ in variants.items():
            home = work / name.replace(" ", "-")
            home.mkdir()
            with _environ(**environ):
                servers[name] = stack.enter_context(edgedesk_server(model, home, Path.cwd()))
        for url, served in servers.values():
            decode_speed(url, served, 4)  # loaded and warm
        for load in (0, args.hogs):
            with hogs(load):
                for round_ in range(args.rounds):
                    order = list(servers) if round_ % 2 == 0 else list(servers)[::-1]
                    for name in order:
                        url, served = servers[name]
                        speed = decode_speed(url, served, args.tokens)
                        speeds.setdefault((name, load), []).append(speed)
                        print(f"  {load} hogs, round {round_ + 1}: {name} {speed:.1f} tok/s")
    print(f"\n{model.name}; {os.cpu_count()} CPUs; {args.tokens} tokens; median of rounds")
    for load in (0, args.hogs):
        ref = statistics.median(speeds[("llama-server", load)])
        line = f"{load} hogs: llama-server {ref:.1f} tok/s"
        for name in variants:
            mine = statistics.median(speeds[(name, load)])
            line += f"; {name} {mine:.1f} ({mine / ref if ref else 0:.2f}x)"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
