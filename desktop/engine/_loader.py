"""Load a model as planned, and back off once when memory runs out.

The plan (per-slot context, slots, GPU layers, threads) comes from the resolver's fit;
llama.cpp can still fail when another program took the VRAM in the meantime. Then we
retry once with half the GPU layers (or half the context on CPU) and *say so* in the
load report. A mixture of experts whose plan keeps some layers' experts in RAM first
tries again with every expert in RAM and all its layers on the GPU.

llama.cpp takes a model's path as UTF-8 text; a file name holding other bytes (possible
on Linux) is loaded through a link with a UTF-8 name in ``links_dir``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path
from typing import Protocol

from desktop.base.errors import ModelLoadError
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions, gpu_offload_supported
from desktop.engine._types import LoadReport, LocalPlan, ModelSpec

MIN_RETRY_CONTEXT = 512
log = logging.getLogger("edgedesk.engine")


class LoadedEngine(LlamaEngine):
    """An engine together with the report of how it was loaded."""

    report: LoadReport


class EngineFactory(Protocol):
    """Opens one engine as ``LoadedEngine`` does; raises ModelLoadError when it cannot."""

    def __call__(
        self,
        path: Path,
        options: LoadOptions,
        *,
        model_id: str,
        chat_template: str | None,
        reasoning: bool,
    ) -> LoadedEngine:
        """The engine for ``path`` under ``options``."""
        ...


def loadable_path(path: Path, links_dir: Path | None) -> Path:
    """``path``, or a link to it named in UTF-8 in ``links_dir``: llama.cpp takes a path
    as UTF-8 text, which cannot spell a file name holding other bytes."""
    try:
        os.fspath(path).encode("utf-8")
        return path
    except UnicodeEncodeError:
        pass
    if links_dir is None:
        return path  # the engine then names the file in its error
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:32]
    link = links_dir / f"{digest}.gguf"
    try:
        link.parent.mkdir(parents=True, exist_ok=True)
        if not (link.is_symlink() and os.readlink(link) == os.fspath(path)):
            staged = link.with_name(f"{digest}.{os.getpid()}.tmp")
            staged.unlink(missing_ok=True)
            staged.symlink_to(path)
            os.replace(staged, link)
    except OSError:
        return path  # the engine then names the file in its error
    return link


def _options(
    spec: ModelSpec,
    plan: LocalPlan,
    context: int,
    layers: int,
    cache_type: str,
    *,
    n_cpu_moe: int,
    prompt_cache_key: bytes | None,
) -> LoadOptions:
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
        prompt_cache_key=prompt_cache_key,
        lookup_draft=plan.lookup_draft,
        projector=plan.projector if spec.kind == "chat" else None,
        swa_full=plan.swa_full,
        n_cpu_moe=n_cpu_moe,
    )


Attempt = tuple[int, int, str, int]  # context, GPU layers, KV cache type, n_cpu_moe


def _attempts(context: int, layers: int, cache: str, experts: int) -> list[Attempt]:
    """The plan, then what a failed load tries once instead (see the module docstring)."""
    attempts: list[Attempt] = [(context, layers, cache, experts)]
    if layers > 0 and 0 < experts < layers:
        # The first N layers' experts are in RAM: all of them (N past the last layer)
        # frees the most VRAM while every layer's attention stays on the GPU.
        experts = layers
        attempts.append((context, layers, cache, experts))
    if layers > 0:
        attempts.append((context, layers // 2, cache, experts))
    elif context > MIN_RETRY_CONTEXT:
        attempts.append((max(MIN_RETRY_CONTEXT, context // 2), 0, cache, experts))
    if cache != "f16":  # a quantized V cache needs flash attention, which a device may lack
        last = attempts[-1]
        attempts.append((last[0], last[1], "f16", last[3]))
    return attempts


def load_engine(
    spec: ModelSpec,
    *,
    links_dir: Path | None = None,
    open_engine: EngineFactory = LoadedEngine,
    prompt_cache_key: bytes | None = None,
) -> LoadedEngine:
    """Load ``spec``; on failure retry once with a smaller plan, else raise ModelLoadError.

    ``links_dir`` holds the UTF-8 links to files whose names are not UTF-8 (none made
    without it); ``open_engine`` opens each attempt (tests pass one that fails on cue);
    ``prompt_cache_key`` (32 bytes) seals the plan's disk prompt cache (None: plaintext).
    """
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
    attempts = _attempts(context, layers, plan.cache_type, plan.n_cpu_moe)
    # A split model is found by llama.cpp from its first shard's name: never linked.
    path = loadable_path(spec.file, links_dir) if not spec.extra_files else spec.file
    started = time.perf_counter()
    failure: ModelLoadError | None = None
    for attempt, (ctx, n_layers, cache, n_cpu_moe) in enumerate(attempts):
        if attempt > 0:
            log.debug(
                "load %s: retry %d with context %d, %d GPU layers, %s KV cache%s",
                spec.model_id,
                attempt,
                ctx,
                n_layers,
                cache,
                f", experts of the first {n_cpu_moe} layers in RAM" if n_cpu_moe else "",
            )
        try:
            options = _options(
                spec,
                plan,
                ctx,
                n_layers,
                cache,
                n_cpu_moe=n_cpu_moe,
                prompt_cache_key=prompt_cache_key,
            )
            engine = open_engine(
                path,
                options,
                model_id=spec.model_id,
                chat_template=spec.chat_template,
                reasoning=spec.reasoning_format == "think",
            )
        except ModelLoadError as exc:
            failure = exc
            continue
        if attempt > 0:
            moved = ", every expert in RAM," if n_cpu_moe > plan.n_cpu_moe else ""
            notes.append(
                f"first load failed ({failure}); loaded with context {ctx}, "
                f"{n_layers} GPU layers{moved} and a {cache} KV cache instead"
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
            n_cpu_moe=n_cpu_moe,
        )
        return engine
    assert failure is not None
    raise ModelLoadError(
        f"{failure.message}; tried context {attempts[-1][0]} with {attempts[-1][1]} GPU layers "
        "too. Close other programs using memory or pick a smaller quant"
    )
