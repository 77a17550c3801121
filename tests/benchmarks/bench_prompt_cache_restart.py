"""What sealing the disk prompt cache costs at a restart: plaintext vs sealed files.

Run: .venv/bin/python -m tests.benchmarks.bench_prompt_cache_restart [--rounds 2]

Real Gemma 3 270M through the real engine: a ~2,300-token system prompt is read once,
the model closed (its conversation written to the prompt cache folder) and loaded again
on the same folder, then the next turn is asked. Printed per round and kind: the cold
TTFT (what an in-memory-only cache pays at every restart), the unload (persist) time,
the bytes on disk and the TTFT after the restart.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, GenerationParams, Message
from tests.benchmarks.bench_vs_llama_server import gemma_file

RULES = " ".join(
    f"Rule {i}: read every file before editing it and keep answers short." for i in range(150)
)
ASK = [Message("system", RULES), Message("user", "List the files.")]
NEXT = [*ASK, Message("assistant", "a.py b.py"), Message("user", "Open a.py.")]
ONE = GenerationParams(max_tokens=1, temperature=0.0)


def _ttft(engine: LlamaEngine, messages: list[Message]) -> float:
    started = time.perf_counter()
    list(engine.stream_chat(ChatCall.of(messages, ONE)))
    return time.perf_counter() - started


def round_of(model: Path, key: bytes | None) -> str:
    """One cold turn, a restart, the next turn; the figures as one line."""
    folder = Path(tempfile.mkdtemp())
    options = LoadOptions(
        context_length=8192,
        parallel=1,
        prompt_cache_dir=folder,
        prompt_cache_disk_bytes=1 << 30,
        prompt_cache_key=key,
    )
    try:
        engine = LlamaEngine(model, options, model_id="gemma")
        cold = _ttft(engine, ASK)
        started = time.perf_counter()
        engine.close()
        persist = time.perf_counter() - started
        size = sum(p.stat().st_size for p in folder.rglob("*.kv"))
        engine = LlamaEngine(model, options, model_id="gemma")
        resumed = _ttft(engine, NEXT)
        cached = engine.stats().prompt_tokens_cached
        engine.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return (
        f"cold TTFT {cold:.2f} s, unload+persist {persist:.2f} s, {size / 1e6:.1f} MB on "
        f"disk, after restart TTFT {resumed:.2f} s, cached {cached}"
    )


def main() -> None:
    """Alternate plaintext and sealed, ``--rounds`` times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    model = gemma_file()
    for number in range(args.rounds):
        for label, key in (("plain", None), ("sealed", os.urandom(32))):
            print(f"round {number} {label}: {round_of(model, key)}", flush=True)


if __name__ == "__main__":
    main()
