"""CPU that `edgedesk serve` spends per streamed token outside ``llama_decode``.

Run: .venv/bin/python -m tests.benchmarks.bench_overhead [--tokens 200] [--clients 1,4]

Wall-clock tokens/s swing with whatever else the machine runs; the CPU time the server's
own Python spends per token barely does, and on a small model it is what separates us
from llama-server. The server runs as a child process (Gemma 3 270M, its defaults) with
``llama_decode`` and ``threading.Thread.run`` wrapped to count thread CPU time; the
real ``openai`` client streams chat answers to it over HTTP. Per generated token it
prints the CPU time of

- ``decode-py``: the decode-loop thread outside ``llama_decode`` (batch filling,
  sampling, hand-off): it delays the next decode directly;
- ``in-decode``: the decode-loop thread inside ``llama_decode`` (for scale; llama.cpp's
  worker threads are not counted);
- ``stream``: the per-request threads (detokenizing, stop strings, SSE bytes);
- ``loop``: the event loop thread (HTTP, socket writes);
- ``other``: any other Python thread.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai

from tests.benchmarks.bench_vs_llama_server import gemma_file
from tests.fixtures.children import free_port

PROMPT = "Write a long story about a lighthouse keeper who finds a message in a bottle."


def _child(report: str, argv: list[str]) -> None:
    """In the server process: wrap the counters in, dump them on SIGUSR1, then serve."""
    import llama_cpp

    from desktop.__main__ import main

    done: dict[str, float] = {}
    decode = {"cpu": 0.0, "calls": 0.0}
    lock = threading.Lock()
    original_decode = llama_cpp.llama_decode

    def timed_decode(ctx: Any, batch: Any) -> int:
        started = time.thread_time()
        try:
            return int(original_decode(ctx, batch))
        finally:
            decode["cpu"] += time.thread_time() - started
            decode["calls"] += 1

    llama_cpp.llama_decode = timed_decode
    original_run = threading.Thread.run

    def counted_run(self: threading.Thread) -> None:
        try:
            original_run(self)
        finally:
            with lock:
                key = _kind(self.name)
                done[key] = done.get(key, 0.0) + time.thread_time()

    threading.Thread.run = counted_run  # type: ignore[method-assign]

    def dump(*_: object) -> None:
        with lock:
            totals = dict(done)
        for thread in threading.enumerate():
            if thread.ident is None:
                continue
            try:
                cpu = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
            except (OSError, ProcessLookupError):
                continue
            key = "loop" if thread is threading.main_thread() else _kind(thread.name)
            totals[key] = totals.get(key, 0.0) + cpu
        totals["in-decode"] = decode["cpu"]
        totals["decodes"] = decode["calls"]
        totals["process"] = time.process_time()
        Path(report).write_text(json.dumps(totals))

    signal.signal(signal.SIGUSR1, dump)
    sys.argv = ["edgedesk", *argv]
    sys.exit(main())


def _kind(name: str) -> str:
    if name == "edgedesk-decode":
        return "decode"
    if name == "edgedesk-stream":
        return "stream"
    return "other"


def _snapshot(proc: subprocess.Popen[bytes], report: Path) -> dict[str, float]:
    report.unlink(missing_ok=True)
    proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not report.exists() or not report.read_text():
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not write its counters")
        time.sleep(0.02)  # a file written by another process has no event to wait on
    return dict(json.loads(report.read_text()))


def _delta(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    """Counter growth from ``before`` to ``after``, per ``seconds``."""
    return {k: (after.get(k, 0.0) - before.get(k, 0.0)) / seconds for k in after}


def _stream(client: openai.OpenAI, model: str, tokens: int, i: int) -> int:
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": f"({i}, {time.time_ns()}) {PROMPT}"}],
        max_tokens=tokens,
        temperature=0.0,
        stream=True,
        stream_options={"include_usage": True},
    )
    used = 0
    for chunk in stream:
        if chunk.usage is not None:
            used = chunk.usage.completion_tokens
    return used


def main() -> None:
    """Run the workloads and print CPU ms per token by thread kind."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--clients", default="1,4")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--idle-s", type=float, default=3.0, help="seconds of idle server measured first"
    )
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1:])
        return
    model = gemma_file()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        port = free_port()
        report = work / "counters.json"
        env = {**os.environ, "EDGEDESK_HOME": str(work / "home"), "EDGEDESK_OFFLINE": "1"}
        cmd = [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_overhead",
            "--child",
            str(report),
            "serve",
            "--model",
            str(model),
            "--port",
            str(port),
            "--no-auth",
        ]
        log = (work / "server.log").open("wb")
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 300
            while True:
                try:
                    if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((work / "server.log").read_text()[-2000:])
                time.sleep(0.25)  # a child's readiness has no event to wait on
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
            name = model.name.removesuffix(".gguf")
            _stream(client, name, 8, -1)  # warm-up: the model loads on first use
            # What the server spends with nothing to do (timers, housekeeping) is taken
            # off each workload's figures, so a slow run does not look like overhead.
            before = _snapshot(proc, report)
            idle_started = time.perf_counter()
            time.sleep(args.idle_s)
            idle = _delta(before, _snapshot(proc, report), time.perf_counter() - idle_started)
            for clients in [int(c) for c in args.clients.split(",")]:
                for _ in range(args.rounds):
                    before = _snapshot(proc, report)
                    started = time.perf_counter()
                    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
                        used = sum(
                            pool.map(
                                lambda i: _stream(client, name, args.tokens, i), range(clients)
                            )
                        )
                    wall = time.perf_counter() - started
                    after = _snapshot(proc, report)
                    delta = {
                        k: v - idle.get(k, 0.0) * wall
                        for k, v in _delta(before, after, 1.0).items()
                    }
                    per = {k: 1000 * v / used for k, v in delta.items() if k != "decodes"}
                    per["decode-py"] = per.get("decode", 0.0) - per["in-decode"]
                    kinds = ("decode-py", "stream", "loop", "other")
                    figures = " ".join(f"{k}={per.get(k, 0.0):.3f}" for k in kinds)
                    total = sum(per.get(k, 0.0) for k in kinds)
                    print(
                        f"clients={clients} tokens={used} decodes={delta['decodes']:.0f} "
                        f"tok/s={used / wall:.1f} | CPU ms/token: {figures} "
                        f"python-total={total:.3f} in-decode={per['in-decode']:.3f}",
                        flush=True,
                    )
        finally:
            proc.terminate()
            proc.wait(20)


if __name__ == "__main__":
    main()
