"""A long prompt on a slow reader: `edgedesk serve` against llama-server, each at its defaults.

Run: .venv/bin/python -m tests.benchmarks.bench_beside_long_prompt [--model FILE |
     --real-shape 9b|moe] [--words 1000] [--tokens 40] [--leave-after 5]
     [--llama-server PATH]

On a CPU a 9B model reads ~15 prompt tokens a second, so an agent's 1,000-word prompt is
a minute of reading. Two scenarios, on llama-server and then on EdgeDesk (one server up
at a time, the same texts for both):

1. *Beside*: a chat streams ``--tokens`` tokens (``ignore_eos``); after its second token
   another client sends ``--words`` random common words to ``/v1/completions``
   (``max_tokens: 1``). Printed: the streaming chat's longest wait between two tokens
   while the prompt was read, its total time, and the long request's own time.
2. *Left*: a client streams a ``--words`` prompt and leaves ``--leave-after`` seconds in;
   a one-token request is sent at once. Printed: how long it waited for its answer,
   the time the server kept reading for a client that was gone.

llama-server reads a prompt in batches of 2,048 tokens (``-b``) and looks at cancelled
or gone requests between them; EdgeDesk reads pieces of about 3 seconds at the speed it
measured (``desktop/engine/_batching/loop.py``, ``progress_piece``). At a fast reader's
speed (a GPU, Gemma 3 270M on a CPU) both read whole batches and the scenarios show
nothing: run it with a real-shape model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

from tests.benchmarks.bench_vs_llama_server import (
    FRESH,
    REAL_SHAPES,
    edgedesk_server,
    gemma_file,
    llama_server,
    peer_binary,
    prefill_text,
)


async def beside(url: str, model: str, words: int, tokens: int, seed: str) -> dict[str, float]:
    """Scenario 1: the streaming chat's longest gap while the long prompt was read."""
    ticks: list[float] = []
    second = asyncio.Event()
    async with httpx.AsyncClient(timeout=1800, limits=FRESH) as client:

        async def stream() -> None:
            body = {
                "model": model,
                "messages": [{"role": "user", "content": f"Tell me a story ({seed})."}],
                "max_tokens": tokens,
                "temperature": 0.0,
                "ignore_eos": True,
                "stream": True,
            }
            async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as r:
                async for line in r.aiter_lines():
                    if line.startswith("data: {") and json.loads(line[6:]).get("choices"):
                        ticks.append(time.perf_counter())
                        if len(ticks) >= 3:  # the role chunk (llama-server: the first token) and 2
                            second.set()
            second.set()

        async def long_prompt() -> tuple[float, float, float]:
            await second.wait()
            body = {
                "model": model,
                "prompt": prefill_text(words, seed),
                "max_tokens": 1,
                "temperature": 0.0,
            }
            started = time.perf_counter()
            response = await client.post(f"{url}/v1/completions", json=body)
            response.raise_for_status()
            usage = response.json().get("usage") or {}
            return started, time.perf_counter(), float(usage.get("prompt_tokens", 0))

        began = time.perf_counter()
        _, (start, end, prompt_tokens) = await asyncio.gather(stream(), long_prompt())
    during = [t for t in ticks if start <= t] + [min(end, ticks[-1])]
    gaps = [b - a for a, b in zip([start, *during], during, strict=False)]
    return {
        "stream_longest_gap_s": max(gaps),
        "stream_total_s": ticks[-1] - began,
        "long_request_s": end - start,
        "long_prompt_tokens": prompt_tokens,
    }


async def left(url: str, model: str, words: int, after_s: float, seed: str) -> dict[str, float]:
    """Scenario 2: how long a one-token request waits after a reading client left."""
    body = {
        "model": model,
        "prompt": prefill_text(words, seed),
        "max_tokens": 8,
        "temperature": 0.0,
        "stream": True,
    }
    async with httpx.AsyncClient(timeout=1800, limits=FRESH) as client:
        with_deadline = client.stream("POST", f"{url}/v1/completions", json=body)
        try:
            async with asyncio.timeout(after_s), with_deadline as response:
                async for _ in response.aiter_lines():
                    pass
        except TimeoutError:
            pass  # the client leaves: its connection is closed here
        gone = time.perf_counter()
        short = {"model": model, "prompt": "Hello", "max_tokens": 1, "temperature": 0.0}
        response = await client.post(f"{url}/v1/completions", json=short)
        response.raise_for_status()
    return {"next_request_waited_s": time.perf_counter() - gone}


def run_side(
    name: str,
    start: Callable[[Path], AbstractContextManager[tuple[str, str]]],
    work: Path,
    args: argparse.Namespace,
) -> dict[str, float]:
    """Both scenarios on one server, started alone on its own data folder."""
    with start(work / name) as (url, model):
        warm = {"model": model, "prompt": "Hi", "max_tokens": 2, "temperature": 0.0}
        httpx.post(f"{url}/v1/completions", json=warm, timeout=600).raise_for_status()
        got = asyncio.run(beside(url, model, args.words, args.tokens, f"{args.run}-beside"))
        print(f"{name:>12}: beside {got}", flush=True)
        gone = asyncio.run(left(url, model, args.words, args.leave_after, f"{args.run}-left"))
        print(f"{name:>12}: left {gone}", flush=True)
    return {**got, **gone}


def main(argv: list[str] | None = None) -> int:
    """Run both scenarios on llama-server, then on EdgeDesk; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--real-shape", choices=sorted(REAL_SHAPES), default=None)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=40)
    parser.add_argument("--leave-after", type=float, default=5.0)
    parser.add_argument("--llama-server", default=None, metavar="PATH")
    args = parser.parse_args(argv)
    args.run = str(time.time_ns())
    work = Path(tempfile.mkdtemp(prefix="edgedesk-beside-"))
    try:
        if args.real_shape is not None:
            from tests.fixtures.real_shape import write_real_shape

            shape = REAL_SHAPES[args.real_shape]
            model = write_real_shape(work / f"{shape}-real-shape-Q4_K_M.gguf", shape)
        else:
            model = args.model or gemma_file()
        peer = peer_binary(args.llama_server, work / "peer", model)
        print(f"llama-server: {peer.describe()}", flush=True)
        src = Path(__file__).resolve().parents[2]
        sides: dict[str, dict[str, float]] = {}
        starts: dict[str, Any] = {
            "llama-server": lambda w: llama_server(peer.path, model, w),
            "edgedesk": lambda w: edgedesk_server(model, w, src),
        }
        for name, start in starts.items():
            (work / name).mkdir()
            sides[name] = run_side(name, start, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ref, ours = sides["llama-server"], sides["edgedesk"]
    print(f"\n{model.name}, {args.words} words beside a {args.tokens}-token stream\n")
    print("| | llama-server (`-np 4`) | EdgeDesk | ratio |\n|---|---|---|---|")
    for key, label in [
        ("stream_longest_gap_s", "a stream's longest wait for a token while it is read"),
        ("stream_total_s", "that stream's whole time"),
        ("long_request_s", "the long prompt's own time"),
        (
            "next_request_waited_s",
            f"a 1-token request after a client left at {args.leave_after:g} s",
        ),
    ]:
        print(f"| {label} | {ref[key]:.1f} s | {ours[key]:.1f} s | {ours[key] / ref[key]:.2f}× |")
    print(
        f"| prompt tokens | {ref['long_prompt_tokens']:.0f} | {ours['long_prompt_tokens']:.0f} | |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
