"""The HTTP clients of ``edgedesk bench``, run in their own process like a real IDE.

Usage (by the benchmark): python -m desktop.machine._bench_clients URL MODEL TOKENS CLIENTS
Prints the figures as JSON on stdout.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

import httpx

GENERATION_PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` percentile (nearest rank) of ``values``."""
    import math

    ordered = sorted(values)
    rank = math.ceil(fraction * len(ordered) - 1e-9)  # nearest rank; epsilon absorbs 0.29*100
    return ordered[min(len(ordered) - 1, max(0, rank - 1))]


def summarize_latencies(latencies: list[float]) -> dict[str, float]:
    """p50/p90/p99 and mean of request latencies, in seconds."""
    return {
        "p50_s": percentile(latencies, 0.50),
        "p90_s": percentile(latencies, 0.90),
        "p99_s": percentile(latencies, 0.99),
        "mean_s": statistics.fmean(latencies),
    }


async def _stream_once(
    client: Any, url: str, model: str, prompt: str, tokens: int
) -> tuple[float, float, int]:
    """One streamed /v1/completions request: (total latency, TTFT, text chunks)."""

    body = {
        "model": model,
        "prompt": prompt,
        "max_tokens": tokens,
        "temperature": 0.0,
        "stream": True,
    }
    started = time.perf_counter()
    first: float | None = None
    pieces = 0
    async with client.stream("POST", f"{url}/completions", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or []
            if choices and choices[0].get("text"):
                pieces += 1
                if first is None:
                    first = time.perf_counter()
    end = time.perf_counter()
    return end - started, (first or end) - started, pieces


async def http_figures(url: str, model: str, tokens: int, clients: int) -> dict[str, object]:
    """One streamed request's speed and TTFT, then latencies of ``clients`` at once."""

    async with httpx.AsyncClient(timeout=600) as client:
        await _stream_once(client, url, model, "warm up", 2)
        total, ttft, pieces = await _stream_once(
            client, url, model, f"{time.time_ns()} {GENERATION_PROMPT}", tokens
        )
        single = {
            "generation_tokens_per_s": (pieces - 1) / max(total - ttft, 1e-9),
            "time_to_first_token_s": ttft,
        }
        results = await asyncio.gather(
            *[
                _stream_once(
                    client, url, model, f"{time.time_ns()} client {i} {GENERATION_PROMPT}", tokens
                )
                for i in range(clients)
            ]
        )
    latencies = [r[0] for r in results]
    return {**single, "clients": clients, "latency": summarize_latencies(latencies)}


def main(argv: list[str]) -> int:
    """Run the clients against URL and print the figures."""
    url, model, tokens, clients = argv[0], argv[1], int(argv[2]), int(argv[3])
    sys.stdout.write(json.dumps(asyncio.run(http_figures(url, model, tokens, clients))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
