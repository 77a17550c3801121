"""llama-cpp-python called directly, for ``edgedesk bench --compare``.

The baseline lives in the engine package because only the engine may import llama_cpp
(through ``_llama_cpp``); it deliberately bypasses our engine, scheduler and server so
the ratio shows what EdgeDesk's own code costs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from desktop.engine._llama_cpp import llama_cpp


@dataclass(frozen=True)
class BaselineResult:
    """Speed of plain llama-cpp-python on the same model and settings."""

    load_s: float
    prompt_tokens_per_s: dict[int, float]
    generation_tokens_per_s: float
    time_to_first_token_s: float


def run_baseline(
    path: Path,
    *,
    context_length: int,
    gpu_layers: int,
    threads: int | None,
    prompts: dict[int, str],
    generation_prompt: str,
    tokens: int,
) -> BaselineResult:
    """Measure load, prompt processing and generation with a bare ``llama_cpp.Llama``.

    Each prompt starts differently (the caller salts them), so llama-cpp-python's own
    prefix matching cannot skip work between measurements.
    """
    started = time.perf_counter()
    llm = llama_cpp.Llama(
        str(path), n_ctx=context_length, n_gpu_layers=gpu_layers, n_threads=threads, verbose=False
    )
    load_s = time.perf_counter() - started
    try:
        prompt_speed: dict[int, float] = {}
        for length, prompt in prompts.items():
            began = time.perf_counter()
            for _ in llm.create_completion(prompt, max_tokens=1, temperature=0.0, stream=True):
                break
            prompt_speed[length] = length / (time.perf_counter() - began)
        began = time.perf_counter()
        first: float | None = None
        count = 0
        for _ in llm.create_completion(
            generation_prompt, max_tokens=tokens, temperature=0.0, stream=True
        ):
            count += 1
            if first is None:
                first = time.perf_counter()
        end = time.perf_counter()
    finally:
        llm.close()
    ttft = (first or end) - began
    speed = (count - 1) / (end - first) if first is not None and count > 1 else 0.0
    return BaselineResult(load_s, prompt_speed, speed, ttft)
