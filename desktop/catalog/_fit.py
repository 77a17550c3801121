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
from typing import Any, Literal

import psutil

from desktop.base.filebytes import format_bytes
from desktop.catalog._gguf_info import GGUFInfo

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
    # ggml types llama.cpp's CPU backend repacks into an extra copy when they stay in
    # RAM (x86 with AVX2: Q4_0, Q4_K, IQ4_NL, MXFP4; AVX-512 adds Q2_K): asked of the
    # llama.cpp build by the composition root; empty when unknown.
    repack_types: frozenset[str] = frozenset()

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
RepackProbe = Callable[[], frozenset[str]]


def detect_hardware(
    gpu_probe: GpuProbe | None = None, repack_probe: RepackProbe | None = None
) -> Hardware:
    """Read RAM, cores and GPUs: the backend's own device report first, else NVML.

    ``gpu_probe`` (passed in by the composition root) asks llama.cpp's backend which
    devices it will offload to and how much memory each has free: that covers Vulkan and
    Metal, and is what the backend allocates against. NVML is the fallback, so a CPU-only
    build still shows the NVIDIA GPU it is not using. A probe that fails counts as none.
    ``repack_probe`` names the weight types llama.cpp's CPU backend repacks here.
    """
    memory = psutil.virtual_memory()
    gpus: tuple[GPU, ...] = ()
    if gpu_probe is not None:
        try:
            gpus = tuple(gpu_probe())
        except Exception:  # a broken driver must not stop the app from starting
            gpus = ()
    repack: frozenset[str] = frozenset()
    if repack_probe is not None:
        try:
            repack = repack_probe()
        except Exception:  # an older llama.cpp without the query: counted as no copy
            repack = frozenset()
    return Hardware(
        ram_total_bytes=int(memory.total),
        ram_available_bytes=int(memory.available),
        cpu_count=os.cpu_count() or 1,
        gpus=gpus or _nvidia_gpus(),
        repack_types=repack,
    )


def with_memory(hardware: Hardware, *, gpu_bytes: int | None, ram_bytes: int | None) -> Hardware:
    """``hardware`` as if it had one GPU with ``gpu_bytes`` free (0: none) and
    ``ram_bytes`` of RAM free: ``models info --gpu-memory/--ram`` plan for that machine."""
    gpus = hardware.gpus
    if gpu_bytes is not None:
        gpus = (GPU("planned GPU", gpu_bytes, gpu_bytes, "planned"),) if gpu_bytes > 0 else ()
    if ram_bytes is None:
        return Hardware(
            hardware.ram_total_bytes,
            hardware.ram_available_bytes,
            hardware.cpu_count,
            gpus,
            hardware.repack_types,
        )
    return Hardware(ram_bytes, ram_bytes, hardware.cpu_count, gpus, hardware.repack_types)


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
    # Mixture of experts: the first ``experts_in_ram_layers`` of the ``expert_layers``
    # layers with routed experts keep those in RAM (llama-server's --n-cpu-moe N).
    experts_in_ram_layers: int = 0
    expert_layers: int = 0
    vram_bytes: int = 0  # of ``estimated_bytes``: on the GPU
    ram_bytes: int = 0  # of ``estimated_bytes``: in RAM (with llama.cpp's repack copy)
    repack_bytes: int = 0  # of ``ram_bytes``: llama.cpp's CPU repack copy of weights
    # What the engine is told (llama-server's --n-cpu-moe N): the routed experts of the
    # first N layers stay in RAM by name. 0 when whole-layer placement already keeps
    # them there (no GPU layers) unless asked for explicitly.
    n_cpu_moe: int = 0

    @property
    def runs(self) -> bool:
        """Whether the model can run here at all."""
        return self.verdict is not Verdict.NO

    def where(self) -> str:
        """Where the weights go, for people: "experts of 48/48 layers in RAM, the rest on
        the GPU: 3.1 GB VRAM, 15.6 GB RAM" (a mixture-of-experts model split so) or
        "2.1 GB VRAM, 6.3 GB RAM"."""
        split = f"{_memory(self.vram_bytes)} VRAM, {_memory(self.ram_bytes)} RAM"
        if not self.vram_bytes:
            split = f"{_memory(self.ram_bytes)} RAM"
        if self.expert_layers and self.gpu_layers > 0 and self.experts_in_ram_layers:
            rest = (
                "the rest on the GPU"
                if self.gpu_layers >= self.total_layers
                else (f"{self.gpu_layers}/{self.total_layers} layers on the GPU")
            )
            return (
                f"experts of {self.experts_in_ram_layers}/{self.expert_layers} layers in RAM, "
                f"{rest}: {split}"
            )
        return split


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
    cpu_moe: CpuMoe = "auto",
) -> Fit:
    """Choose the context, KV cache type and GPU layers for ``info``; explicit values win.

    A mixture-of-experts model (``cpu_moe`` "auto") gets everything but its routed
    experts on the GPU first (attention, norms, router, shared experts, output, KV
    cache), then as many layers' experts as fit, the first layers' in RAM (as
    llama-server's --n-cpu-moe N); "all" keeps every expert in RAM, N the first N
    layers', "none" places whole layers. RAM and VRAM are counted apart, RAM with
    llama.cpp's CPU repack copy of the weights it keeps (``Hardware.repack_types``).

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
    pushes its layers onto the CPU (nor, for a mixture of experts placed "auto", its
    experts into RAM).
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
        # A mixture of experts keeps its KV cache on the GPU even when experts go to
        # RAM: there a longer context would push experts out, so it is fitted too.
        moe = info.expert_layers > 0 and cpu_moe == "auto"
        fixed = info.expert_layers > 0 and cpu_moe not in ("auto", "none")
        if gpu_layers is None and gpu_budget > 0 and fixed:
            # Experts placed by hand: the context that lets the rest stay on the GPU.
            in_ram = _fixed_experts(cpu_moe, info.block_count)

            def on_gpu(length: int, kind: str) -> int:
                split = _Split(
                    info, length, kind, slots, swa_full=swa_full, repack_types=frozenset()
                )
                return split(info.block_count + 1, in_ram)[0]

            if quantize and on_gpu(ctx, cache) > gpu_budget:
                cache = "q8_0"
            while ctx > small and on_gpu(ctx, cache) > gpu_budget:
                ctx = max(small, ctx // 2)
        elif gpu_layers is None and gpu_budget > 0 and (moe or need <= gpu_budget):
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
    total_layers = info.block_count + 1
    experts = info.expert_layers
    split = _Split(info, ctx, cache, slots, swa_full=swa_full, repack_types=hardware.repack_types)
    layers, in_ram, n_cpu_moe = _place(
        split, vram, gpu_offload=gpu_offload, gpu_layers=gpu_layers, cpu_moe=cpu_moe
    )
    vram_need, ram_need, repack = split(layers, in_ram)
    sizes = info.expert_layer_bytes()
    in_ram_layers = sum(1 for size in sizes[:in_ram] if size > 0)
    estimate = vram_need + ram_need
    if estimate > ram + vram or ram_need > ram:
        verdict, reason = (
            Verdict.NO,
            (
                f"needs ~{_memory(estimate + process_bytes)} at context {ctx}; "
                f"{_memory(ram + process_bytes)} RAM"
                f"{f' + {_memory(vram)} VRAM' if vram else ''} usable"
            ),
        )
    else:
        verdict, reason = _verdict(layers, total_layers, in_ram_layers, experts, gpu_offload)
    if cache != "f16":
        reason += f"; KV cache {cache}"
    return Fit(
        verdict,
        ctx,
        layers,
        total_layers,
        estimate + process_bytes,
        reason,
        slots,
        cache,
        swa_full,
        experts_in_ram_layers=in_ram_layers,
        expert_layers=experts,
        vram_bytes=vram_need,
        ram_bytes=ram_need + process_bytes,
        repack_bytes=repack,
        n_cpu_moe=n_cpu_moe,
    )


CpuMoe = Literal["auto", "all", "none"] | int


def _place(
    split: _Split, vram: int, *, gpu_offload: bool, gpu_layers: int | None, cpu_moe: CpuMoe
) -> tuple[int, int, int]:
    """(GPU layers, layers whose experts are in RAM, llama-server's --n-cpu-moe N to
    apply) for a model that fits in memory."""
    info = split.info
    total_layers = info.block_count + 1
    experts = info.expert_layers
    in_ram = _fixed_experts(cpu_moe, info.block_count) if experts else 0
    if gpu_layers is not None:
        layers = gpu_layers
    elif experts and cpu_moe != "none" and vram > VRAM_RESERVE_BYTES:
        layers, in_ram = _moe_on_gpu(split, vram - VRAM_RESERVE_BYTES, total_layers, cpu_moe)
    elif info.weights and vram > VRAM_RESERVE_BYTES:  # the header says what each layer holds
        budget = vram - VRAM_RESERVE_BYTES
        layers = next((n for n in range(total_layers, 0, -1) if split(n, in_ram)[0] <= budget), 0)
    else:
        layers = _layers_on_gpu(
            info, split.ctx, vram, split.cache, split.slots, swa_full=split.swa_full
        )
    layers = min(layers, total_layers) if gpu_offload else 0
    # Told to llama.cpp when layers are on the GPU, or when asked for by name.
    n_cpu_moe = in_ram if experts and (layers > 0 or cpu_moe not in ("auto", "none")) else 0
    if experts and layers <= 0:
        in_ram = info.block_count  # on the CPU every expert is in RAM anyway
    return layers, in_ram, n_cpu_moe


def _verdict(
    layers: int, total_layers: int, in_ram_layers: int, experts: int, gpu_offload: bool
) -> tuple[Verdict, str]:
    """The verdict and its reason for a model that fits."""
    if layers >= total_layers and layers > 0 and in_ram_layers > 0:
        return Verdict.PARTIAL, f"experts of {in_ram_layers}/{experts} layers in RAM"
    if layers >= total_layers and layers > 0:
        return Verdict.GPU, f"all {total_layers} layers on the GPU"
    if layers > 0 and in_ram_layers > 0:
        return (
            Verdict.PARTIAL,
            f"{layers}/{total_layers} layers on the GPU, experts of "
            f"{in_ram_layers}/{experts} layers in RAM",
        )
    if layers > 0:
        return Verdict.PARTIAL, f"{layers}/{total_layers} layers on the GPU, rest on CPU"
    why = "no GPU offload in this build" if not gpu_offload else "no GPU memory free"
    return Verdict.CPU, f"runs on the CPU ({why})"


class _Split:
    """VRAM and RAM one placement of a model needs at a context (see ``fit_model``)."""

    def __init__(
        self,
        info: GGUFInfo,
        ctx: int,
        cache: str,
        slots: int,
        *,
        swa_full: bool,
        repack_types: frozenset[str],
    ) -> None:
        self.info = info
        self.ctx, self.cache, self.slots, self.swa_full = ctx, cache, slots, swa_full
        self.repack_types = repack_types
        self.kv = info.kv_bytes(ctx, cache, slots, swa_full)
        self.ram_only = 0 if swa_full else info.checkpoint_bytes(ctx, cache, slots)
        # the compute buffers, as gguf_info.estimate_bytes counts them
        everything = info.estimate_bytes(ctx, cache, slots, swa_full)
        self.compute = everything - info.weight_bytes - self.kv - self.ram_only

    def __call__(self, gpu_layers: int, experts_in_ram: int) -> tuple[int, int, int]:
        """(VRAM, RAM, of which repack copy) with ``gpu_layers`` offloaded and the first
        ``experts_in_ram`` layers' routed experts in RAM."""
        info = self.info
        gpu_w, ram_w, repack = info.weight_split(gpu_layers, experts_in_ram, self.repack_types)
        blocks = max(1, info.block_count)
        on_gpu_blocks = min(blocks, max(0, gpu_layers - 1))  # the output layer goes first
        kv_gpu = self.kv * on_gpu_blocks // blocks
        vram = gpu_w + kv_gpu + (self.compute if gpu_layers > 0 else 0)
        # With layers on the GPU the CPU still runs what stays in RAM: its own buffers.
        cpu_compute = self.compute if gpu_layers <= 0 else _CPU_COMPUTE_BYTES
        ram = ram_w + repack + self.kv - kv_gpu + self.ram_only + cpu_compute
        if gpu_layers > 0 and ram_w + repack == 0:
            ram -= _CPU_COMPUTE_BYTES
        return vram, ram, repack


# What llama.cpp's CPU backend allocates for its part of a split graph: measured at
# well under 100 MiB for 9B-16B models at 8K context.
_CPU_COMPUTE_BYTES = 64 * 1024 * 1024


def _fixed_experts(cpu_moe: CpuMoe, blocks: int) -> int:
    """Layers whose experts ``cpu_moe`` puts in RAM without asking the memory."""
    if cpu_moe == "all":
        return blocks
    if isinstance(cpu_moe, int):
        return max(0, min(cpu_moe, blocks))
    return 0


def _moe_on_gpu(split: _Split, budget: int, total_layers: int, cpu_moe: CpuMoe) -> tuple[int, int]:
    """GPU layers and experts-in-RAM layers of a mixture-of-experts model in ``budget``:
    every layer with the fewest experts in RAM that fit ("auto"; the first layers' go),
    or the fixed count; with too little VRAM even for that, fewer layers."""
    blocks = total_layers - 1
    if cpu_moe == "auto":
        for in_ram in range(blocks + 1):
            if split(total_layers, in_ram)[0] <= budget:
                return total_layers, in_ram
        in_ram = blocks
    else:
        in_ram = _fixed_experts(cpu_moe, blocks)
    for layers in range(total_layers, 0, -1):
        if split(layers, in_ram)[0] <= budget:
            return layers, in_ram
    return 0, in_ram


def _memory(value: int) -> str:
    return format_bytes(value, memory=True)


# A quant's weight type llama.cpp's CPU backend may repack, and the share of a file's
# bytes in it (Q4_K_M: 54% for GLM-4-9B, 55% Moonlight, 77% GLM-4.7-Flash, counted on
# tests/fixtures/real_shape.py; the single-type quants: nearly all of it).
_REPACKED_SHARE = {
    "Q4_K_M": ("Q4_K", 0.6),
    "Q4_K_S": ("Q4_K", 0.9),
    "Q4_0": ("Q4_0", 0.95),
    "IQ4_NL": ("IQ4_NL", 0.95),
    "Q5_K_M": ("Q5_K", 0.6),
    "Q6_K": ("Q6_K", 0.95),
    "Q8_0": ("Q8_0", 0.95),
}


def fit_from_size(
    file_bytes: int,
    hardware: Hardware,
    *,
    gpu_offload: bool,
    context_length: int = DEFAULT_CONTEXT,
    quant: str | None = None,
) -> Verdict:
    """A verdict before download, from the file size alone (KV cache approximated).

    Without the header we cannot know the KV width, so we allow 10% of the weights plus
    the compute overhead for an 8K context, which matches dense 7-9B models and
    overestimates MoE/MLA ones slightly. What stays in RAM of a ``quant`` whose type this
    CPU repacks (``Hardware.repack_types``) counts twice: the mapped file and the copy.
    """
    need = int(file_bytes * 1.10) + 96 * 1024 * 1024 + context_length * 4096 * 4
    ram = int(hardware.ram_available_bytes * RAM_HEADROOM)
    vram = hardware.vram_free_bytes - VRAM_RESERVE_BYTES if gpu_offload else 0
    if vram > 0 and need <= vram:
        return Verdict.GPU
    kind, share = _REPACKED_SHARE.get((quant or "").upper(), ("", 0.0))
    if kind in hardware.repack_types:
        need += int(share * min(file_bytes, need - max(vram, 0)))
    if need <= ram + max(vram, 0):
        return Verdict.PARTIAL if vram > 0 else Verdict.CPU
    return Verdict.NO


def placement_from_size(
    file_bytes: int,
    hardware: Hardware,
    *,
    gpu_offload: bool,
    experts_share: float | None,
    context_length: int = DEFAULT_CONTEXT,
) -> str | None:
    """Where a mixture of experts' weights go before download, from the file size and
    the catalog's share of routed-expert bytes: "about 40% of the experts in RAM, the
    rest on the GPU" (None: a dense model, no GPU, or the whole model fits the GPU).
    Estimated as ``fit_from_size`` estimates; the header, once downloaded, says exactly.
    """
    if not experts_share or not gpu_offload:
        return None
    need = int(file_bytes * 1.10) + 96 * 1024 * 1024 + context_length * 4096 * 4
    vram = hardware.vram_free_bytes - VRAM_RESERVE_BYTES
    experts = int(file_bytes * experts_share)
    if vram <= 0 or need <= vram:
        return None
    if need - experts > vram:
        return "every expert and some layers in RAM, the rest on the GPU"
    share = max(1, min(100, round(100 * (need - vram) / experts)))
    return f"about {share}% of the experts in RAM, the rest on the GPU"


def recommend_quant(
    sizes: dict[str, int], hardware: Hardware, *, gpu_offload: bool, default: str | None = None
) -> str | None:
    """The best quant for this machine, or None if none runs.

    Fully on the GPU: the largest that fits (quality is free there). Otherwise the
    catalog's default (a Q4_K_M-class balance of speed and quality) if it runs, else
    the smallest that runs: on the CPU, speed falls with every extra byte.
    """
    verdicts = {
        name: fit_from_size(size, hardware, gpu_offload=gpu_offload, quant=name)
        for name, size in sizes.items()
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
