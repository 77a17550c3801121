"""What each protocol's streaming costs over the same engine stream.

Run: .venv/bin/python tests/benchmarks/bench_protocols.py [--tokens 256] [--rounds 5]
One server over the tiny test model (so the engine is cheap and the translation shows),
greedy, the same prompt: streamed through /v1/chat/completions, /v1/responses,
/v1/messages and /api/chat. Prints, per route, the median wall time of a whole stream,
tokens per second and the bytes sent per token.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fixtures.tiny_gguf import write_tiny_llama
from tests.server.conftest import serve

HI = [{"role": "user", "content": "hello world"}]


def bodies(tokens: int) -> dict[str, dict[str, object]]:
    """The same greedy request in each protocol."""
    return {
        "/v1/chat/completions": {"messages": HI, "max_tokens": tokens, "temperature": 0},
        "/v1/responses": {"input": "hello world", "max_output_tokens": tokens, "temperature": 0},
        "/v1/messages": {"messages": HI, "max_tokens": tokens, "temperature": 0},
        "/api/chat": {"messages": HI, "options": {"num_predict": tokens, "temperature": 0}},
    }


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = write_tiny_llama(Path(tmp) / "tiny-chat.gguf")
        with serve(Path(tmp) / "home", [model]) as srv, httpx.Client(timeout=120) as http:
            headers = {"Authorization": f"Bearer {srv.key}"}
            print(f"{'route':<22} {'median s':>9} {'tok/s':>8} {'bytes/tok':>10}")
            for path, body in bodies(args.tokens).items():
                times, sizes = [], []
                for _ in range(args.rounds + 1):  # the first round warms up
                    started = time.perf_counter()
                    reply = http.post(
                        srv.root + path,
                        headers=headers,
                        json={"model": "tiny-chat", "stream": True, **body},
                    )
                    times.append(time.perf_counter() - started)
                    sizes.append(len(reply.content))
                    assert reply.status_code == 200, reply.text
                median = statistics.median(times[1:])
                print(
                    f"{path:<22} {median:>9.3f} {args.tokens / median:>8.0f} "
                    f"{statistics.median(sizes[1:]) / args.tokens:>10.0f}"
                )


if __name__ == "__main__":
    main()
