"""Load a model as planned, and back off once when memory runs out.

The plan (per-slot context, slots, GPU layers, threads) comes from the resolver's fit;
llama.cpp can still fail when another program took the VRAM in the meantime. Then we
retry once with half the GPU layers (or half the context on CPU) and *say so* in the
load report.
"""

from __future__ import annotations

import time
from typing import Any

from desktop.engine.llama import LlamaEngine
from desktop.engine.native import LoadOptions, gpu_offload_supported
from desktop.engine.types import LoadReport, ModelSpec
from desktop.errors import ModelLoadError

MIN_RETRY_CONTEXT = 512
DEFAULT_PARALLEL = 4
# ModelSpec.options keys passed through to LoadOptions when set (None: engine default).
_TUNING_KEYS = ("batch_threads", "n_batch", "n_ubatch")


class LoadedEngine(LlamaEngine):
    """An engine together with the report of how it was loaded."""

    report: LoadReport


def _options(spec: ModelSpec, context: int, layers: int) -> LoadOptions:
    tuning: dict[str, Any] = {key: spec.options.get(key) for key in _TUNING_KEYS}
    return LoadOptions(
        context_length=context,  # per slot: what one request may use
        gpu_layers=layers,
        threads=spec.threads,
        embedding=spec.kind != "chat",
        state_cache_bytes=int(spec.options.get("state_cache_bytes", 512 * 1024 * 1024)),
        parallel=int(spec.options.get("parallel", DEFAULT_PARALLEL)),
        **tuning,
    )


def load_engine(spec: ModelSpec) -> LoadedEngine:
    """Load ``spec``; on failure retry once with a smaller plan, else raise ModelLoadError."""
    context = spec.context_length or 4096
    layers = spec.gpu_layers or 0
    offload = gpu_offload_supported()
    if not offload:
        layers = 0
    notes: list[str] = []
    if not offload and (spec.gpu_layers or 0) > 0:
        notes.append("this llama.cpp build has no GPU offload; running on the CPU")
    attempts = [(context, layers)]
    if layers > 0:
        attempts.append((context, layers // 2))
    elif context > MIN_RETRY_CONTEXT:
        attempts.append((max(MIN_RETRY_CONTEXT, context // 2), 0))
    started = time.perf_counter()
    failure: ModelLoadError | None = None
    for attempt, (ctx, n_layers) in enumerate(attempts):
        try:
            engine = LoadedEngine(
                spec.path,
                _options(spec, ctx, n_layers),
                model_id=spec.model_id,
                chat_template=spec.chat_template,
                reasoning=spec.reasoning_format == "think",
            )
        except ModelLoadError as exc:
            failure = exc
            continue
        if attempt > 0:
            notes.append(
                f"first load failed ({failure}); loaded with context {ctx} and "
                f"{n_layers} GPU layers instead"
            )
        template_source = "n/a"
        if spec.kind == "chat":
            try:
                template_source = engine.template().source
            except Exception:  # reported when a chat is attempted; loading still succeeded
                template_source = "missing"
        engine.report = LoadReport(
            model_id=spec.model_id,
            path=spec.path,
            context_length=engine.context_length,
            gpu_layers=n_layers,
            offload_supported=offload,
            load_s=time.perf_counter() - started,
            estimated_bytes=int(spec.options.get("estimated_bytes", 0)),
            template_source=template_source,
            notes=tuple(notes),
            placement=engine.placement,
        )
        return engine
    assert failure is not None
    raise ModelLoadError(
        f"{failure.message}; tried context {attempts[-1][0]} with {attempts[-1][1]} GPU layers "
        "too. Close other programs using memory or pick a smaller quant"
    )
