"""``edgedesk bench``: what a model really does on this machine, through the product's paths.

Every figure is measured through the same resolver, scheduler and (for the HTTP part)
server code that real use takes. ``--compare`` adds plain llama-cpp-python in the same
process as the baseline and reports our figures as ratios to it.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from desktop.engine import GenerationParams, Scheduler
from desktop.machine._bench_clients import GENERATION_PROMPT
from desktop.resolve import looks_like_path
from desktop.root.context import AppContext

Progress = Callable[[str], None]
_FILLER = (
    "The quick brown fox jumps over the lazy dog while the river runs past the old "
    "mill and the lighthouse keeper writes down the weather. "
)


class HttpFigures(TypedDict, total=False):
    """The HTTP part of a benchmark: one streamed request, then concurrent clients
    (``bench_clients.http_figures``), or only ``skipped`` with the reason."""

    skipped: str
    generation_tokens_per_s: float
    time_to_first_token_s: float
    clients: int
    latency: dict[str, float]


class EngineFigures(TypedDict, total=False):
    """Slots, queue, prompt-cache and batching counters of the benchmarked model."""

    peak_queue_length: int
    slots_total: int
    peak_slots_busy: int
    prompt_tokens_cached: int
    prompt_tokens_processed: int
    decode_steps: int
    tokens_per_decode_step: float


class BaselineFigures(TypedDict):
    """Plain llama-cpp-python's figures in the same process (``--compare``)."""

    load_s: float
    prompt_tokens_per_s: dict[str, float]
    generation_tokens_per_s: float
    time_to_first_token_s: float


@dataclass
class BenchReport:
    """Every figure of one benchmark run (JSON-ready via ``to_dict``)."""

    model: str
    path: str
    hardware: str
    backend: str
    context_length: int
    gpu_layers: int
    n_cpu_moe: int = 0  # layers whose routed experts stayed in RAM (llama-server's N)
    load_cold_s: float = 0.0
    load_warm_s: float = 0.0
    prompt_tokens_per_s: dict[int, float] = field(default_factory=dict)
    generation_tokens_per_s: float = 0.0
    time_to_first_token_s: float = 0.0
    http: HttpFigures = field(default_factory=HttpFigures)
    engine: EngineFigures = field(default_factory=EngineFigures)
    peak_ram_bytes: int = 0
    peak_vram_bytes: int | None = None
    baseline: BaselineFigures | None = None
    ratios: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:  # Any: asdict()'s JSON, for --json and --chart
        """A plain dict for ``--json`` and saved results."""
        data = asdict(self)
        data["prompt_tokens_per_s"] = {str(k): v for k, v in self.prompt_tokens_per_s.items()}
        return data


def _evict_page_cache(path: Path) -> bool:
    """Drop the file from the OS page cache so the next load reads from disk."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return False
    with path.open("rb") as handle:
        advise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return True


def build_prompt(token_count: int, tokenize: Callable[[str], list[int]], salt: int) -> str:
    """A prompt of about ``token_count`` tokens whose start differs per ``salt``.

    The salt defeats prefix reuse, so every measurement processes the whole prompt.
    """
    text = f"Document {salt}. "
    while len(tokenize(text)) < token_count:
        text += _FILLER
    tokens = tokenize(text)
    while len(tokens) > token_count:
        text = text[: int(len(text) * token_count / len(tokens)) - 1]
        tokens = tokenize(text)
    return text


def _peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def _vram_used_bytes() -> int | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        used = int(pynvml.nvmlDeviceGetMemoryInfo(handle).used)
        pynvml.nvmlShutdown()
        return used
    except Exception:  # no NVIDIA driver: VRAM is simply not reported
        return None


def measure_engine(
    ctx: AppContext,
    model: str,
    report: BenchReport,
    *,
    tokens: int,
    prompt_lengths: tuple[int, ...],
    progress: Progress,
) -> dict[int, str]:
    """Load (cold, warm), prompt processing and generation through the scheduler."""
    scheduler = ctx.scheduler
    spec = ctx.resolver(model)
    progress("load (cold, from disk)")
    scheduler.unload(spec.model_id)
    _evict_page_cache(spec.file)
    started = time.perf_counter()
    scheduler.load(model)
    report.load_cold_s = time.perf_counter() - started
    progress("load (warm, from page cache)")
    scheduler.unload(spec.model_id)
    started = time.perf_counter()
    scheduler.load(model)
    report.load_warm_s = time.perf_counter() - started

    def tokenize(text: str) -> list[int]:
        result: list[int] = scheduler.with_engine(model, lambda e: e.tokenize(text))
        return result

    prompts = {}
    for salt, length in enumerate(prompt_lengths):
        if length >= report.context_length - 8:
            continue
        prompts[length] = build_prompt(length, tokenize, salt)
        progress(f"prompt processing, {length} tokens")
        final = None
        for chunk in scheduler.stream_completion(
            model, prompts[length], GenerationParams(max_tokens=1, temperature=0.0)
        ):
            final = chunk
        assert final is not None and final.usage and final.timings
        evaluated = final.usage.prompt_tokens - final.usage.cached_tokens
        report.prompt_tokens_per_s[length] = evaluated / max(final.timings.prompt_s, 1e-9)
    progress(f"generation, {tokens} tokens")
    final = None
    for chunk in scheduler.stream_completion(
        model,
        f"{time.time_ns()} {GENERATION_PROMPT}",
        GenerationParams(max_tokens=tokens, temperature=0.0),
    ):
        final = chunk
    assert final is not None and final.timings
    report.generation_tokens_per_s = final.tokens_per_s
    report.time_to_first_token_s = final.timings.time_to_first_token_s
    report.peak_ram_bytes = _peak_rss_bytes()
    report.peak_vram_bytes = _vram_used_bytes()
    return prompts


def slot_figures(scheduler: Scheduler, model_id: str) -> EngineFigures:
    """Slots used at most at once, the longest queue, and the engine's prompt-cache and
    batching counters, for ``model_id`` since it was loaded."""
    figures: EngineFigures = {"peak_queue_length": scheduler.peak_queue_depth}
    for loaded in scheduler.loaded(counters=True):
        if loaded.model_id != model_id:
            continue
        figures["slots_total"] = loaded.slots_total
        figures["peak_slots_busy"] = loaded.peak_slots_busy
        if loaded.stats is not None:
            steps = loaded.stats.decode_steps
            figures["prompt_tokens_cached"] = loaded.stats.prompt_tokens_cached
            figures["prompt_tokens_processed"] = loaded.stats.prompt_tokens_processed
            figures["decode_steps"] = steps
            figures["tokens_per_decode_step"] = (
                loaded.stats.tokens_decoded / steps if steps else 0.0
            )
    return figures


def measure_http(
    ctx: AppContext,
    model: str,
    *,
    tokens: int,
    clients: int,
    progress: Progress,
    engine: EngineFigures | None = None,
) -> HttpFigures:
    """Speed through the real local server (uvicorn on 127.0.0.1, no key, free port)."""
    import asyncio
    import json
    import subprocess

    from desktop.base.config import ServerSettings
    from desktop.base.errors import EdgeDeskError
    from desktop.machine._bench_clients import http_figures

    if not ctx.settings.server.enabled:
        return {"skipped": "the local server is turned off by policy (ServerAllowed)"}
    # Port 0: the runner binds the socket itself and reports the real port. Loopback and
    # no key: the benchmark's own clients are the only ones that can reach it.
    settings = ServerSettings.model_construct(
        **{
            **ctx.settings.server.model_dump(),
            "host": "127.0.0.1",
            "port": 0,
            "require_key": False,
            "queue_max": max(16, clients + 1),
        }
    )
    # Housekeeping is not started: a reap or a rescan must not land mid-measurement.
    runner = ctx.new_api_server(settings=settings)
    # A .gguf path is served under its stable id; catalog and installed ids keep their
    # entry (chat template, reasoning format) by being resolved as themselves.
    model_id = ctx.resolver.register(Path(model)) if looks_like_path(model) else model
    runner.start()
    try:
        progress(f"HTTP: streamed generation, then {clients} concurrent clients")
        if getattr(sys, "frozen", False):  # a frozen app cannot start `python -m`
            # the same JSON object the client process prints (read back unchecked below)
            figures = asyncio.run(http_figures(runner.url, model_id, tokens, clients))
            return cast(HttpFigures, figures)
        # Clients run in their own process, as IDEs and scripts do: in this process
        # they would share the GIL with the server and slow what they measure.
        result = subprocess.run(  # noqa: S603 - our own interpreter and module, no shell
            [
                sys.executable,
                "-m",
                "desktop.machine._bench_clients",
                runner.url,
                model_id,
                str(tokens),
                str(clients),
            ],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if result.returncode != 0:
            raise EdgeDeskError(f"the benchmark client failed: {result.stderr.strip()[-300:]}")
        printed: HttpFigures = json.loads(result.stdout)
        return printed
    finally:
        if engine is not None:
            engine.update(slot_figures(ctx.scheduler, ctx.resolver(model).model_id))
        runner.stop()


def run_bench(
    ctx: AppContext,
    model: str,
    *,
    tokens: int = 128,
    clients: int = 4,
    context_length: int | None = None,
    compare: bool = False,
    prompt_lengths: tuple[int, ...] = (128, 512, 2048),
    progress: Progress = lambda _step: None,
) -> BenchReport:
    """Benchmark ``model`` as EdgeDesk runs it; with ``compare`` also the bare engine."""
    from desktop.engine import backend_info

    spec = ctx.resolver(model, context_length=context_length)
    report = BenchReport(
        model=spec.model_id,
        path=str(spec.file),
        hardware=ctx.hardware.describe(),
        backend=backend_info().describe(),
        context_length=spec.context_length or 0,
        gpu_layers=spec.gpu_layers or 0,
        n_cpu_moe=spec.local.n_cpu_moe if spec.local else 0,
    )
    prompts = measure_engine(
        ctx, model, report, tokens=tokens, prompt_lengths=prompt_lengths, progress=progress
    )
    ctx.scheduler.unload(spec.model_id)  # the server loads it again through the same path
    report.http = measure_http(
        ctx, model, tokens=tokens, clients=clients, progress=progress, engine=report.engine
    )
    if compare:
        from desktop.engine import run_baseline

        ctx.scheduler.close()  # free memory: the baseline loads its own copy
        progress("baseline: llama-cpp-python called directly")
        base = run_baseline(
            spec.file,
            context_length=report.context_length,
            gpu_layers=report.gpu_layers,
            threads=spec.threads,
            prompts=prompts,
            generation_prompt=f"{time.time_ns()} {GENERATION_PROMPT}",
            tokens=tokens,
        )
        report.baseline = {
            "load_s": base.load_s,
            "prompt_tokens_per_s": {str(k): v for k, v in base.prompt_tokens_per_s.items()},
            "generation_tokens_per_s": base.generation_tokens_per_s,
            "time_to_first_token_s": base.time_to_first_token_s,
        }
        report.ratios = _ratios(
            report,
            base.generation_tokens_per_s,
            base.time_to_first_token_s,
            base.prompt_tokens_per_s,
        )
    report.peak_ram_bytes = max(report.peak_ram_bytes, _peak_rss_bytes())
    return report


def _ratios(
    report: BenchReport, base_tps: float, base_ttft: float, base_prompt: dict[int, float]
) -> dict[str, float]:
    ratios: dict[str, float] = {}
    http = "generation_tokens_per_s" in report.http
    if base_tps > 0:
        ratios["generation_vs_direct"] = report.generation_tokens_per_s / base_tps
        if http:
            ratios["http_generation_vs_direct"] = (
                float(report.http["generation_tokens_per_s"]) / base_tps
            )
    if http:
        ratios["http_ttft_overhead_ms"] = (
            float(report.http["time_to_first_token_s"]) - base_ttft
        ) * 1000
    ratios["ttft_overhead_ms"] = (report.time_to_first_token_s - base_ttft) * 1000
    for length, speed in base_prompt.items():
        if speed > 0 and length in report.prompt_tokens_per_s:
            ratios[f"prompt_{length}_vs_direct"] = report.prompt_tokens_per_s[length] / speed
    return ratios
