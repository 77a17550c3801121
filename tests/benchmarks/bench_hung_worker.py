"""Fault injection: what a hung model's worker costs the requests that do not use it.

A driver hang, a deadlock or paging without end look, from outside, like a worker that
stopped (SIGSTOP). This runs `edgedesk serve` with a chat model and an embedding model,
each in its own worker, and times a normal request (one small embedding from the other
model, and ``GET /health``) while all is idle, then again while the chat model's worker
is stopped in the middle of a streamed answer, in the same run:

    python -m tests.benchmarks.bench_hung_worker [--src CHECKOUT] [--requests N] [--chat GGUF]

``--src`` is the checkout whose ``desktop`` package serves (default: this one), so two
versions can be compared on one machine; ``--chat`` a chat GGUF (default: the suite's
tiny one, written here, as is the tiny embedding model). Prints one JSON line per phase
(p50/p90/p99 seconds of each request kind) and a last line with each p99's ratio, hung ÷
idle (the goal: within 2×), whether the worker stayed stopped through the measurement,
and how the hung stream ended and after how long.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from desktop.machine._bench_clients import percentile
from tests.fixtures.children import READY_TIMEOUT_S, free_port, running, wait_answering
from tests.fixtures.tiny_gguf import write_tiny_bert, write_tiny_llama

KINDS = ("embedding", "health")


def _workers(server_pid: int) -> set[int]:
    """The model workers ``edgedesk serve`` has started (its children running one)."""
    found = set()
    for child in psutil.Process(server_pid).children(recursive=True):
        try:
            if "desktop.engine._worker" in " ".join(child.cmdline()):
                found.add(child.pid)
        except psutil.Error:
            continue
    return found


def _normal(http: httpx.Client, root: str, embed: str, kind: str) -> float:
    """Seconds one normal request of ``kind`` takes (it must succeed)."""
    started = time.perf_counter()
    if kind == "embedding":
        body = {"model": embed, "input": "hello there"}
        answer = http.post(f"{root}/v1/embeddings", json=body)
    else:
        answer = http.get(f"{root}/health")
    elapsed = time.perf_counter() - started
    answer.raise_for_status()
    return elapsed


def _phase(http: httpx.Client, root: str, embed: str, requests: int) -> dict[str, Any]:
    """p50, p90 and p99 of ``requests`` normal requests of each kind, interleaved."""
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(requests):
        for kind in KINDS:
            times[kind].append(_normal(http, root, embed, kind))
    return {
        f"{kind}_{name}_s": round(percentile(values, q), 4)
        for kind, values in times.items()
        for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
    }


def _hung_stream(url: str, chat: str, started: threading.Event, out: dict[str, Any]) -> None:
    """Stream a long answer; note when it began streaming and how and when it ended."""
    body = {
        "model": chat,
        "messages": [{"role": "user", "content": "Tell a very long story."}],
        "max_tokens": 100000,
        "stream": True,
    }
    try:
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=900) as r:
            for n, line in enumerate(r.iter_lines()):
                if n == 4:
                    started.set()
                if '"error"' in line:
                    out["ended_with"] = json.loads(line.removeprefix("data: "))["error"]["code"]
    except httpx.HTTPError as exc:
        out["ended_with"] = type(exc).__name__
    out.setdefault("ended_with", "the answer's end")
    out["ended_at"] = time.perf_counter()
    started.set()


def run(src: Path, chat_file: Path, embed_file: Path, requests: int) -> None:
    """Serve both models from ``src``, measure idle, stop the chat worker, measure again."""
    with tempfile.TemporaryDirectory(prefix="bench-hung-") as tmp:
        work = Path(tmp)
        port = free_port()
        env = {
            **os.environ,
            "EDGEDESK_HOME": str(work / "home"),
            "EDGEDESK_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",  # another checkout is only read
        }
        cmd = [sys.executable, "-m", "desktop", "serve", "--port", str(port), "--no-auth"]
        cmd += ["--model", str(chat_file), "--model", str(embed_file)]
        with running(cmd, env=env, log=work / "edgedesk.log", cwd=src, grace_s=20) as proc:
            root = f"http://127.0.0.1:{port}"
            wait_answering(f"{root}/v1/models", proc, timeout=READY_TIMEOUT_S)
            chat = chat_file.name.removesuffix(".gguf")
            embed = embed_file.name.removesuffix(".gguf")
            with httpx.Client(timeout=900) as http:
                http.post(
                    f"{root}/v1/chat/completions",
                    json={"model": chat, "messages": [{"role": "user", "content": "hi"}]},
                ).raise_for_status()
                chat_worker = _workers(proc.pid)
                _normal(http, root, embed, "embedding")  # loads the embedding model
                idle = _phase(http, root, embed, requests)
                print(json.dumps({"phase": "idle", **idle}), flush=True)

                began = threading.Event()
                stream: dict[str, Any] = {}
                streaming = threading.Thread(
                    target=_hung_stream, args=(root, chat, began, stream), daemon=True
                )
                streaming.start()
                began.wait(300)
                [pid] = chat_worker
                os.kill(pid, signal.SIGSTOP)
                stopped_at = time.perf_counter()
                hung = _phase(http, root, embed, requests)
                still = _still_stopped(pid)
                print(json.dumps({"phase": "worker stopped", **hung}), flush=True)
                streaming.join(120)  # a worker nobody watches: the stream stays open
                if _still_stopped(pid):
                    os.kill(pid, signal.SIGCONT)
            summary = {
                f"{kind}_p99_ratio": round(
                    hung[f"{kind}_p99_s"] / max(idle[f"{kind}_p99_s"], 1e-6), 2
                )
                for kind in KINDS
            }
            summary["stopped_throughout"] = still
            summary["stream_ended_with"] = stream.get("ended_with", "still open")
            if "ended_at" in stream:
                summary["stream_ended_after_s"] = round(stream["ended_at"] - stopped_at, 1)
            print(json.dumps(summary), flush=True)


def _still_stopped(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_STOPPED
    except psutil.Error:
        return False


def main() -> None:
    """Parse the options and run once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--requests", type=int, default=100, help="of each kind, per phase")
    parser.add_argument("--chat", type=Path, default=None, help="a chat GGUF (default: tiny)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hung-models-") as tmp:
        models = Path(tmp)
        chat = args.chat or write_tiny_llama(models / "tiny-chat.gguf")
        embed = write_tiny_bert(models / "tiny-embed.gguf")
        run(args.src.resolve(), chat, embed, args.requests)


if __name__ == "__main__":
    main()
