"""llama-server's single-stream decode and prompt speed on one model, for the GPU check.

Run: .venv/bin/python -m tests.benchmarks.bench_gpu_peer --llama-server PATH --model FILE
     [--n-cpu-moe N] [--ctx 8192] [--tokens 128] [--prompt-words 512] [--rounds 3]
     [--json FILE]

``scripts/device-check.sh`` puts this beside ``edgedesk bench`` on the same file, with
the same context, layers (all on the GPU) and, for a mixture of experts, the same
``--n-cpu-moe N`` split: llama-server is started with ``-ngl 999 -np 1 -c CTX`` (and
``--n-cpu-moe N``), then sent ``--rounds`` cold ``/completion`` requests of random words
that generate ``--tokens`` tokens each, ignoring end-of-sequence (a random-weight model
may say it at once). The figures are llama-server's own ``timings`` (decode and prompt
tokens per second), medians over the rounds. Prints one line; ``--json`` keeps them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
from pathlib import Path

import httpx

from tests.benchmarks.llama_server_peer import library_links
from tests.fixtures.children import free_port, running, wait_answering

READY_TIMEOUT_S = 600.0  # a 18 GB file read from disk before the first answer


def server_command(
    binary: Path, model: Path, port: int, *, ctx: int, n_cpu_moe: int | None
) -> list[str]:
    """llama-server's command line: every layer on the GPU, one slot, ``ctx`` tokens,
    and the routed experts of the first ``n_cpu_moe`` layers in RAM when given."""
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["-ngl", "999", "-np", "1", "-c", str(ctx)]
    if n_cpu_moe is not None:
        cmd += ["--n-cpu-moe", str(n_cpu_moe)]
    return cmd


def prompt(words: int, seed: int) -> str:
    """``words`` random lowercase words: a prompt no cache has seen."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join("".join(rng.choices(letters, k=rng.randint(2, 8))) for _ in range(words))


def measure(
    binary: Path,
    model: Path,
    *,
    ctx: int,
    n_cpu_moe: int | None,
    tokens: int,
    prompt_words: int,
    rounds: int,
    work: Path,
) -> dict[str, float]:
    """Median decode and prompt tokens/s over ``rounds`` requests to a fresh llama-server."""
    port = free_port()
    env = {**os.environ, "LD_LIBRARY_PATH": library_links(binary, work / "libs")}
    cmd = server_command(binary, model, port, ctx=ctx, n_cpu_moe=n_cpu_moe)
    decode: list[float] = []
    prefill: list[float] = []
    with running(cmd, env=env, log=work / "llama-server.log", grace_s=20) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_answering(f"{url}/health", proc, timeout=READY_TIMEOUT_S)
        for index in range(rounds + 1):  # the first warms the GPU up: not counted
            body = {
                "prompt": prompt(prompt_words, seed=index),
                "n_predict": tokens,
                "ignore_eos": True,
                "cache_prompt": False,
                "temperature": 0.0,
            }
            reply = httpx.post(f"{url}/completion", json=body, timeout=600.0)
            reply.raise_for_status()
            timings = reply.json()["timings"]
            if index:
                decode.append(float(timings["predicted_per_second"]))
                prefill.append(float(timings["prompt_per_second"]))
    return {
        "decode_tok_s": statistics.median(decode),
        "prompt_tok_s": statistics.median(prefill),
        "rounds": float(rounds),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure, print one line, save ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--llama-server", type=Path, required=True, metavar="PATH")
    parser.add_argument("--model", type=Path, required=True, metavar="FILE")
    parser.add_argument("--n-cpu-moe", type=int, default=None, metavar="N")
    parser.add_argument("--ctx", type=int, default=8192, metavar="N")
    parser.add_argument("--tokens", type=int, default=128, metavar="N")
    parser.add_argument("--prompt-words", type=int, default=512, metavar="N")
    parser.add_argument("--rounds", type=int, default=3, metavar="N")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = parser.parse_args(argv)
    if not args.llama_server.is_file():
        parser.error(f"--llama-server: no file {args.llama_server}")
    if not args.model.is_file():
        parser.error(f"--model: no file {args.model}")
    with tempfile.TemporaryDirectory(prefix="edgedesk-gpu-peer-") as work:
        figures = measure(
            args.llama_server,
            args.model,
            ctx=args.ctx,
            n_cpu_moe=args.n_cpu_moe,
            tokens=args.tokens,
            prompt_words=args.prompt_words,
            rounds=max(1, args.rounds),
            work=Path(work),
        )
    split = f", --n-cpu-moe {args.n_cpu_moe}" if args.n_cpu_moe is not None else ""
    print(
        f"llama-server {args.model.name}{split}: decode {figures['decode_tok_s']:.1f} tok/s, "
        f"prompt {figures['prompt_tok_s']:.0f} tok/s (median of {args.rounds})"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
