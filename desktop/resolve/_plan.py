"""The load plan: a located model's header fitted to this machine and the user's settings.

The engine gets a ``ModelSpec`` that names only files and numbers (``LocalPlan``); it
never sees the catalog or the settings.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from desktop.base.config import EngineSettings, Paths
from desktop.base.defaults import (
    RANK_POOLING,
    WORKER_PROCESS_BYTES,
    physical_cores,
    state_cache_bytes,
)
from desktop.base.errors import InvalidRequest, ModelFileError
from desktop.catalog import Fit, GGUFInfo, Hardware, ModelEntry, fit_model
from desktop.engine import LocalPlan, ModelKind, ModelSpec
from desktop.resolve._locate import stable_id

MAX_CONTEXT = 1_048_576
# Prompt-lookup drafting on by default (most tokens guessed per step) only for the model
# families whose code-rewrite benchmark measured a gain (docs/benchmarks.md); on a CPU a
# guessed row costs most of a decode step, so a family is added when measured, not hoped.
LOOKUP_BY_FAMILY: dict[str, int] = {"gemma3": 32}  # Gemma 3 270M, 2 CPU cores: 1.5-2.9x
_ENCODER_ARCHS = frozenset({"bert", "nomic-bert", "jina-bert-v2", "xlm-roberta", "modern-bert"})


def effective_parallel(settings: EngineSettings) -> int:
    """Slots per model: ``engine.parallel``, capped by ``engine.max_parallel`` (policy)."""
    cap = settings.max_parallel
    return min(settings.parallel, cap) if cap is not None else settings.parallel


def fit(
    info: GGUFInfo,
    hardware: Hardware,
    settings: EngineSettings,
    *,
    gpu_offload: bool,
    context_length: int | None = None,
    projector: Path | None = None,
) -> Fit:
    """Context, cache type and GPU layers for ``info`` here; explicit settings win.

    The slots' KV memory is counted as the engine will lay it out (one shared cache,
    sliding-window layers at window size, or full size one per slot with
    ``engine.swa_full_cache``: see ``GGUFInfo.kv_bytes``). A vision
    projector loads beside the model: its bytes count as more weights; a model in its
    own worker process (``engine.worker_process``) costs that process too.
    A mixture-of-experts model's routed experts go where ``engine.cpu_moe`` says.
    """
    if projector is not None:
        info = replace(info, weight_bytes=info.weight_bytes + projector.stat().st_size)
    ctx = context_length or settings.context_length
    if ctx is not None and not 64 <= ctx <= MAX_CONTEXT:
        raise InvalidRequest(
            f"context length {ctx} is out of range; use a value between 64 and {MAX_CONTEXT}",
            param="context_length",
        )
    return fit_model(
        info,
        hardware,
        gpu_offload=gpu_offload,
        context_length=ctx,
        gpu_layers=settings.gpu_layers,
        parallel=effective_parallel(settings),
        cache_type=settings.cache_type,
        swa_full=settings.swa_full_cache,
        process_bytes=WORKER_PROCESS_BYTES if settings.worker_process else 0,
        cpu_moe=settings.cpu_moe,
    )


def lookup_tokens(info: GGUFInfo, settings: EngineSettings) -> int:
    """Prompt-lookup tokens per step: ``engine.prompt_lookup_tokens`` when set, else the
    family's measured default (``LOOKUP_BY_FAMILY``; 0, off, for any other)."""
    if settings.prompt_lookup_tokens is not None:
        return settings.prompt_lookup_tokens
    return LOOKUP_BY_FAMILY.get(info.architecture, 0)


def ram_state_cache(hardware: Hardware, settings: EngineSettings) -> int:
    """Bytes of RAM a model keeps for conversations pushed out of its slots:
    ``engine.state_cache_mb`` when set, else sized to this machine's memory."""
    if settings.state_cache_mb is not None:
        return settings.state_cache_mb * 1024 * 1024
    return state_cache_bytes(hardware.ram_total_bytes)


def kind_of(info: GGUFInfo) -> ModelKind:
    """What a model does, read from its header: chat, embedding or reranker."""
    if info.pooling_type == RANK_POOLING:
        return "reranker"
    if info.architecture in _ENCODER_ARCHS:
        return "embedding"
    return "chat"


def encoder_context(info: GGUFInfo, requested: int | None) -> int | None:
    """An embedding or reranker model's context: ``requested``, never past its trained one.

    An encoder's positions are a table of its trained length; a longer context (the
    Settings' Context length applies to every model) let llama.cpp read past that
    table and abort the whole process on a long input (``GGML_ASSERT(i01 >= 0 ...)``).
    """
    trained = info.context_length
    if requested is None or trained <= 0:
        return requested
    return min(requested, trained)


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def plan_model(
    ref: str,
    path: Path,
    entry: ModelEntry | None,
    files: list[Path],
    info: GGUFInfo,
    *,
    hardware: Hardware,
    settings: EngineSettings,
    gpu_offload: bool,
    paths: Paths,
    context_length: int | None = None,
    projector: Path | None = None,
) -> ModelSpec:
    """The ModelSpec for the located model ``ref`` (first file ``path``, header ``info``)."""
    if entry is not None and (entry.kind == "chat") != (kind_of(info) == "chat"):
        # A file installed under a catalog id that holds another kind of model (an
        # import from before ids stopped being taken from file names): the catalog's
        # kind would send a chat model to embed, which crashes llama.cpp.
        raise ModelFileError(
            f"{path} is installed as {entry.id} but holds {_a(kind_of(info))} model, "
            f"not {_a(entry.kind)} model; remove it with 'edgedesk models rm {ref}' and pull "
            "or import the right file"
        )
    kind = entry.kind if entry else kind_of(info)
    if kind != "chat":
        context_length = encoder_context(info, context_length or settings.context_length)
    planned = fit(
        info,
        hardware,
        settings,
        gpu_offload=gpu_offload,
        context_length=context_length,
        projector=projector,
    )
    threads = settings.threads or physical_cores()
    return ModelSpec(
        path=path,
        model_id=entry.id if entry else stable_id(path),
        kind=kind,
        context_length=planned.context_length,
        gpu_layers=planned.gpu_layers,
        chat_template=entry.chat_template if entry else None,
        reasoning_format=entry.reasoning if entry else "none",
        threads=threads,
        extra_files=tuple(files[1:]),
        plan=LocalPlan(
            parallel=planned.parallel,
            batch_threads=settings.batch_threads or threads,
            cache_type="q8_0" if planned.cache_type == "q8_0" else "f16",
            state_cache_bytes=ram_state_cache(hardware, settings),
            prompt_cache_dir=paths.prompt_cache_dir,
            prompt_cache_disk_bytes=settings.prompt_cache_disk_mb * 1024 * 1024,
            lookup_draft=lookup_tokens(info, settings),
            projector=projector,
            swa_full=settings.swa_full_cache,
            n_cpu_moe=planned.n_cpu_moe,
            estimated_bytes=planned.estimated_bytes,
        ),
    )
