"""Load a model as planned, and back off once when memory runs out.

The plan (per-slot context, slots, GPU layers, threads) comes from the resolver's fit;
llama.cpp can still fail when another program took the VRAM in the meantime. Then we
retry once with half the GPU layers (or half the context on CPU) and *say so* in the
load report.
"""

from __future__ import annotations

import time

from desktop.engine.llama import LlamaEngine
from desktop.engine.native import LoadOptions, gpu_offload_supported
from desktop.engine.types import LoadReport, LocalPlan, ModelSpec
from desktop.errors import ModelLoadError

MIN_RETRY_CONTEXT = 512


class LoadedEngine(LlamaEngine):
    """An engine together with the report of how it was loaded."""

    report: LoadReport


def _options(spec: ModelSpec, plan: LocalPlan, context: int, layers: int,
             cache_type: str) -> LoadOptions:
    return LoadOptions(
        context_length=context,  # shared by the slots: one request may use all of it
        gpu_layers=layers,
        threads=spec.threads,
        embedding=spec.kind != "chat",
        state_cache_bytes=plan.state_cache_bytes,
        parallel=plan.parallel,
        batch_threads=plan.batch_threads,
        n_batch=plan.n_batch,
        n_ubatch=plan.n_ubatch,
        cache_type=cache_type,
        prompt_cache_dir=plan.prompt_cache_dir,
        prompt_cache_disk_bytes=plan.prompt_cache_disk_bytes,
        lookup_draft=plan.lookup_draft,
        projector=plan.projector if spec.kind == "chat" else None,
    )


def load_engine(spec: ModelSpec) -> LoadedEngine:
    """Load ``spec``; on failure retry once with a smaller plan, else raise ModelLoadError."""
    plan = spec.local
    if plan is None:
        raise ModelLoadError(f"{spec.model_id} is a remote model; it does not load here")
    context = spec.context_length or 4096
    layers = spec.gpu_layers or 0
    offload = gpu_offload_supported()
    if not offload:
        layers = 0
    notes: list[str] = []
    if not offload and (spec.gpu_layers or 0) > 0:
        notes.append("this llama.cpp build has no GPU offload; running on the CPU")
    cache = plan.cache_type
    attempts = [(context, layers, cache)]
    if layers > 0:
        attempts.append((context, layers // 2, cache))
    elif context > MIN_RETRY_CONTEXT:
        attempts.append((max(MIN_RETRY_CONTEXT, context // 2), 0, cache))
    if cache != "f16":  # a quantized V cache needs flash attention, which a device may lack
        attempts.append((attempts[-1][0], attempts[-1][1], "f16"))
    started = time.perf_counter()
    failure: ModelLoadError | None = None
    for attempt, (ctx, n_layers, cache) in enumerate(attempts):
        try:
            engine = LoadedEngine(
                spec.file,
                _options(spec, plan, ctx, n_layers, cache),
                model_id=spec.model_id,
                chat_template=spec.chat_template,
                reasoning=spec.reasoning_format == "think",
            )
        except ModelLoadError as exc:
            failure = exc
            continue
        if attempt > 0:
            notes.append(
                f"first load failed ({failure}); loaded with context {ctx}, "
                f"{n_layers} GPU layers and a {cache} KV cache instead"
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
            estimated_bytes=plan.estimated_bytes,
            template_source=template_source,
            cache_type=cache,
            notes=tuple(notes),
            placement=engine.placement,
        )
        return engine
    assert failure is not None
    raise ModelLoadError(
        f"{failure.message}; tried context {attempts[-1][0]} with {attempts[-1][1]} GPU layers "
        "too. Close other programs using memory or pick a smaller quant"
    )
