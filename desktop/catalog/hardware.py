"""Detect this machine's memory and GPUs, and decide how a model fits on it.

The fit is decided before any load: how many layers go to the GPU, which context to
use, and a verdict a person understands ("fits on GPU", "fits in RAM, slower",
"won't fit").
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import psutil

from desktop.base.filebytes import format_bytes
from desktop.catalog.gguf_info import GGUFInfo

DEFAULT_CONTEXT = 8192
MIN_CONTEXT = 512
# Leave room for the OS, the app and the display; a model that takes the last byte
# of RAM makes the whole desktop swap.
RAM_HEADROOM = 0.85
VRAM_RESERVE_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class GPU:
    """One GPU and its memory."""

    name: str
    total_bytes: int
    free_bytes: int
    backend: str = "cuda"


@dataclass(frozen=True)
class Hardware:
    """What the machine offers to a model."""

    ram_total_bytes: int
    ram_available_bytes: int
    cpu_count: int
    gpus: tuple[GPU, ...] = ()

    @property
    def vram_free_bytes(self) -> int:
        """Free memory of the largest GPU (llama.cpp offloads to one device by default)."""
        return max((g.free_bytes for g in self.gpus), default=0)

    def describe(self) -> str:
        """One line for people: RAM, cores, GPUs."""
        parts = [
            f"RAM {_memory(self.ram_available_bytes)} free of {_memory(self.ram_total_bytes)}",
            f"{self.cpu_count} CPU threads",
        ]
        parts += [
            f"{g.name} {_memory(g.free_bytes)} free of {_memory(g.total_bytes)}" for g in self.gpus
        ]
        return ", ".join(parts) if self.gpus else ", ".join([*parts, "no GPU detected"])


def _nvidia_gpus() -> tuple[GPU, ...]:
    try:
        import pynvml
    except ImportError:
        return ()
    try:
        pynvml.nvmlInit()
    except Exception:  # no driver, no device: the common case on laptops and CI
        return ()
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            memory: Any = pynvml.nvmlDeviceGetMemoryInfo(handle)
            name = pynvml.nvmlDeviceGetName(handle)
            gpus.append(GPU(str(name), int(memory.total), int(memory.free)))
        return tuple(gpus)
    except Exception:
        return ()
    finally:
        with contextlib.suppress(Exception):  # shutdown failure changes nothing for us
            pynvml.nvmlShutdown()


GpuProbe = Callable[[], Sequence[GPU]]


def detect_hardware(gpu_probe: GpuProbe | None = None) -> Hardware:
    """Read RAM, cores and GPUs: the backend's own device report first, else NVML.

    ``gpu_probe`` (passed in by the composition root) asks llama.cpp's backend which
    devices it will offload to and how much memory each has free: that covers Vulkan and
    Metal, and is what the backend allocates against. NVML is the fallback, so a CPU-only
    build still shows the NVIDIA GPU it is not using. A probe that fails counts as none.
    """
    memory = psutil.virtual_memory()
    gpus: tuple[GPU, ...] = ()
    if gpu_probe is not None:
        try:
            gpus = tuple(gpu_probe())
        except Exception:  # a broken driver must not stop the app from starting
            gpus = ()
    return Hardware(
        ram_total_bytes=int(memory.total),
        ram_available_bytes=int(memory.available),
        cpu_count=os.cpu_count() or 1,
        gpus=gpus or _nvidia_gpus(),
    )


class Verdict(StrEnum):
    """How a model fits; the wording is what the CLI and the UI badges show."""

    GPU = "fits on GPU"
    PARTIAL = "fits in RAM, slower"
    CPU = "fits in RAM, slower (CPU)"
    NO = "won't fit"


@dataclass(frozen=True)
class Fit:
    """The decided load plan for one model on this machine."""

    verdict: Verdict
    context_length: int
    gpu_layers: int
    total_layers: int
    estimated_bytes: int
    reason: str
    parallel: int = 1  # slots, sharing ``context_length`` tokens of KV cache
    cache_type: str = "f16"  # the KV cache's element type: "f16" or "q8_0"
    swa_full: bool = False  # sliding-window layers keep every position (one cache per slot)

    @property
    def runs(self) -> bool:
        """Whether the model can run here at all."""
        return self.verdict is not Verdict.NO


def _layers_on_gpu(
    info: GGUFInfo,
    ctx: int,
    vram: int,
    cache_type: str = "f16",
    slots: int = 1,
    *,
    swa_full: bool = False,
) -> int:
    layers = max(info.block_count, 1)
    budget = vram - VRAM_RESERVE_BYTES
    if budget <= 0:
        return 0
    if info.estimate_bytes(ctx, cache_type, slots, swa_full) <= budget:
        return layers + 1  # every repeating layer plus the output layer
    kv = info.kv_bytes(ctx, cache_type, slots, swa_full)
    per_layer = (info.weight_bytes + kv) / layers
    return max(0, min(layers, int(budget // per_layer)))


def _shrink(
    info: GGUFInfo,
    ctx: int,
    cache: str,
    *,
    limit: int,
    floor: int,
    quantize: bool,
    slots: int,
    swa_full: bool = False,
) -> tuple[int, str]:
    """``ctx`` and cache type within ``limit`` bytes: q8_0 first, then halving to ``floor``."""
    if quantize and info.estimate_bytes(ctx, cache, slots, swa_full) > limit:
        cache = "q8_0"
    while ctx > floor and info.estimate_bytes(ctx, cache, slots, swa_full) > limit:
        ctx = max(floor, ctx // 2)
    return ctx, cache


def fit_model(
    info: GGUFInfo,
    hardware: Hardware,
    *,
    gpu_offload: bool,
    context_length: int | None = None,
    gpu_layers: int | None = None,
    parallel: int = 1,
    cache_type: str = "auto",
    swa_full: bool = False,
    process_bytes: int = 0,
) -> Fit:
    """Choose the context, KV cache type and GPU layers for ``info``; explicit values win.

    ``process_bytes`` is RAM the model costs beyond llama.cpp's own buffers (its worker
    process: the interpreter and the libraries it loads): it comes off the RAM the model
    may use and is part of the estimate.

    The ``parallel`` slots share one KV cache (unified, as llama-server's): one request
    may use the whole context, so memory does not grow with slots. A model's
    sliding-window layers keep only the slots' windows (and each slot a checkpoint of
    its window), counted so; with ``swa_full`` they keep every position, one cache per
    slot (each slot keeps the context, so the context shrinks, never the slots). Unset,
    the context is the model's trained one where memory allows; when it does not, the cache is first
    quantized to q8_0 (``cache_type`` "auto"), then the context halves (not below
    MIN_CONTEXT). A model that would run wholly on the GPU at DEFAULT_CONTEXT is fitted
    to VRAM the same way, down to DEFAULT_CONTEXT at most, so a longer context never
    pushes its layers onto the CPU.
    """
    trained = max(info.context_length, MIN_CONTEXT)
    ctx = context_length if context_length is not None else trained
    quantize = cache_type == "auto"
    cache = "f16" if quantize else cache_type
    slots = max(1, parallel)
    ram = max(0, int(hardware.ram_available_bytes * RAM_HEADROOM) - process_bytes)
    vram = hardware.vram_free_bytes if gpu_offload else 0
    if context_length is None:
        gpu_budget = vram - VRAM_RESERVE_BYTES
        small = min(trained, DEFAULT_CONTEXT)
        need = info.estimate_bytes(small, cache, slots, swa_full)
        if gpu_layers is None and 0 < need <= gpu_budget:
            ctx, cache = _shrink(
                info,
                ctx,
                cache,
                limit=gpu_budget,
                floor=small,
                quantize=quantize,
                slots=slots,
                swa_full=swa_full,
            )
        ctx, cache = _shrink(
            info,
            ctx,
            cache,
            limit=ram + vram,
            floor=MIN_CONTEXT,
            quantize=quantize,
            slots=slots,
            swa_full=swa_full,
        )
    elif quantize and info.estimate_bytes(ctx, cache, slots, swa_full) > ram + vram:
        cache = "q8_0"
    estimate = info.estimate_bytes(ctx, cache, slots, swa_full)
    total_layers = info.block_count + 1
    layers = (
        gpu_layers
        if gpu_layers is not None
        else _layers_on_gpu(info, ctx, vram, cache, slots, swa_full=swa_full)
    )
    layers = min(layers, total_layers) if gpu_offload else 0
    on_gpu_bytes = int(estimate * layers / total_layers) if total_layers else 0
    if estimate > ram + vram or estimate - on_gpu_bytes > ram:
        verdict, reason = (
            Verdict.NO,
            (
                f"needs ~{_memory(estimate + process_bytes)} at context {ctx}; "
                f"{_memory(ram + process_bytes)} RAM"
                f"{f' + {_memory(vram)} VRAM' if vram else ''} usable"
            ),
        )
    elif layers >= total_layers and layers > 0:
        verdict, reason = Verdict.GPU, f"all {total_layers} layers on the GPU"
    elif layers > 0:
        verdict, reason = Verdict.PARTIAL, f"{layers}/{total_layers} layers on the GPU, rest on CPU"
    else:
        why = "no GPU offload in this build" if not gpu_offload else "no GPU memory free"
        verdict, reason = Verdict.CPU, f"runs on the CPU ({why})"
    if cache != "f16":
        reason += f"; KV cache {cache}"
    return Fit(
        verdict, ctx, layers, total_layers, estimate + process_bytes, reason, slots, cache, swa_full
    )


def _memory(value: int) -> str:
    return format_bytes(value, memory=True)


def fit_from_size(
    file_bytes: int, hardware: Hardware, *, gpu_offload: bool, context_length: int = DEFAULT_CONTEXT
) -> Verdict:
    """A verdict before download, from the file size alone (KV cache approximated).

    Without the header we cannot know the KV width, so we allow 10% of the weights plus
    the compute overhead for an 8K context, which matches dense 7-9B models and
    overestimates MoE/MLA ones slightly.
    """
    need = int(file_bytes * 1.10) + 96 * 1024 * 1024 + context_length * 4096 * 4
    ram = int(hardware.ram_available_bytes * RAM_HEADROOM)
    vram = hardware.vram_free_bytes - VRAM_RESERVE_BYTES if gpu_offload else 0
    if vram > 0 and need <= vram:
        return Verdict.GPU
    if need <= ram + max(vram, 0):
        return Verdict.PARTIAL if vram > 0 else Verdict.CPU
    return Verdict.NO


def recommend_quant(
    sizes: dict[str, int], hardware: Hardware, *, gpu_offload: bool, default: str | None = None
) -> str | None:
    """The best quant for this machine, or None if none runs.

    Fully on the GPU: the largest that fits (quality is free there). Otherwise the
    catalog's default (a Q4_K_M-class balance of speed and quality) if it runs, else
    the smallest that runs: on the CPU, speed falls with every extra byte.
    """
    verdicts = {
        name: fit_from_size(size, hardware, gpu_offload=gpu_offload) for name, size in sizes.items()
    }
    on_gpu = [n for n, v in verdicts.items() if v is Verdict.GPU]
    if on_gpu:
        return max(on_gpu, key=lambda n: sizes[n])
    runs = [n for n, v in verdicts.items() if v is not Verdict.NO]
    if not runs:
        return None
    if default in runs:
        return default
    return min(runs, key=lambda n: sizes[n])
