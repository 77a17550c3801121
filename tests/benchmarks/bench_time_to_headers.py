"""Time to headers vs time to first token of streamed requests with a long prompt.

A coding agent's first turn is ~20k tokens; a client that waits for the response's
headers (a header timeout, a relay) sees nothing until they come. This runs `edgedesk
serve` on the real Gemma 3 270M from a checkout and sends one streamed request per route
with a ~3.3k-token prompt (distinct per request: no cache), timing the status line and
headers, the first event and the first words:

    python -m tests.benchmarks.bench_time_to_headers [--src CHECKOUT] [--words N]

``--src`` is the checkout whose ``desktop`` package serves (default: this one), so two
versions can be compared on one machine. Prints one JSON line per route.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.benchmarks.bench_vs_llama_server import edgedesk_server, gemma_file

PARAGRAPH = (
    "The lighthouse keeper wrote down every ship that passed, the weather of each hour, "
    "the colour of the sea and the names of the birds that rested on the rail. "
)


def _bodies(model: str, text: str) -> dict[str, dict[str, Any]]:
    user = [{"role": "user", "content": text}]
    return {
        "/v1/chat/completions": {"model": model, "messages": user, "max_tokens": 4},
        "/v1/messages": {"model": model, "messages": user, "max_tokens": 4},
        "/v1/responses": {"model": model, "input": text, "max_output_tokens": 4, "store": False},
    }


def _words(route: str, line: str) -> bool:
    """Whether an SSE data line carries generated words."""
    if not line.startswith("data: ") or line == "data: [DONE]":
        return False
    event = json.loads(line[6:])
    if route == "/v1/chat/completions":
        return any(c.get("delta", {}).get("content") for c in event.get("choices") or [])
    if route == "/v1/messages":
        return event.get("type") == "content_block_delta"
    return event.get("type") == "response.output_text.delta"


def measure(url: str, model: str, route: str, text: str) -> dict[str, Any]:
    """One streamed request: seconds to headers, to the first event, to the first words."""
    body = {**_bodies(model, text)[route], "stream": True}
    started = time.perf_counter()
    figures: dict[str, Any] = {"route": route}
    with httpx.stream("POST", f"{url}{route}", json=body, timeout=600) as response:
        figures["status"] = response.status_code
        figures["headers_s"] = round(time.perf_counter() - started, 3)
        for line in response.iter_lines():
            now = round(time.perf_counter() - started, 3)
            if line.startswith("data: ") and "first_event_s" not in figures:
                figures["first_event_s"] = now
            if _words(route, line):
                figures["first_words_s"] = now
                break
    return figures


def main() -> None:
    """Serve Gemma 270M from ``--src`` and time each route once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--words", type=int, default=2400, help="prompt length in words")
    args = parser.parse_args()
    repeats = max(1, args.words // len(PARAGRAPH.split()))
    with tempfile.TemporaryDirectory() as work:
        with edgedesk_server(gemma_file(), Path(work), args.src) as (url, model):
            measure(url, model, "/v1/chat/completions", "Hi")  # loads the model
            for n, route in enumerate(_bodies(model, "")):
                text = f"Log {n} ({time.time_ns()}).\n" + PARAGRAPH * repeats + "\nSummarize."
                print(json.dumps(measure(url, model, route, text)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
