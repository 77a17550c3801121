"""Where llama.cpp put a loaded model: which devices hold how many of its layers.

llama.cpp has no call that lists a model's devices, so this follows its own rule
(``llama_model_load``'s default device selection): every GPU in ggml's registry, else
the integrated GPUs of one backend; ``n_gpu_layers`` (negative: all) of the model's
``n_layer + n_layer_nextn + 1`` layers (the output layer counts) go to them. The layer
count is read from the loaded model and the devices from ggml's registry, so the
answer is llama.cpp's, in EdgeDesk's words (``Placement.describe``).

Plain blocking calls, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from desktop.engine._hardware.devices import Device, list_devices
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._native import gpu_offload_supported
from desktop.engine._types import Placement


def offload_devices(devices: Sequence[Device]) -> list[Device]:
    """The devices llama.cpp offloads to by default: every GPU, else one backend's iGPUs."""
    gpus = [d for d in devices if d.kind == "gpu" and d.backend != "RPC"]
    if gpus:
        return gpus
    igpus: list[Device] = []
    for device in devices:
        if device.kind == "igpu" and (not igpus or device.backend == igpus[-1].backend):
            igpus.append(device)
    return igpus


def device_label(device: Device) -> str:
    """``Vulkan0 (llvmpipe)``: the device's name and the head of its description."""
    short = device.description.split(" (")[0].strip()
    return f"{device.name} ({short})" if short else device.name


def placement_for(
    layers: int, gpu_layers: int, offload: bool, devices: Sequence[Device]
) -> Placement:
    """Where ``gpu_layers`` of a model with ``layers`` repeating layers go on ``devices``."""
    total = layers + 1  # the output layer, as llama.cpp counts ("offloaded 19/19 layers")
    used = offload_devices(devices) if offload else []
    wanted = total if gpu_layers < 0 else gpu_layers
    on_gpu = min(wanted, total) if used else 0
    return Placement(
        layers_total=total,
        layers_offloaded=on_gpu,
        devices=tuple(device_label(d) for d in used) if on_gpu else (),
    )


def planned_placement(block_count: int, gpu_layers: int, n_cpu_moe: int = 0) -> Placement:
    """Where a model whose GGUF header says ``block_count`` layers will go, before it
    loads (the routed experts of the first ``n_cpu_moe`` layers in RAM)."""
    offload = gpu_offload_supported()
    placement = placement_for(
        block_count, gpu_layers if offload else 0, offload, list_devices() if offload else []
    )
    if placement.cpu_only or n_cpu_moe <= 0:
        return placement
    return replace(placement, experts_in_ram=min(n_cpu_moe, block_count))


def model_placement(model: Any, gpu_layers: int, n_cpu_moe: int = 0) -> Placement:
    """Where llama.cpp put the loaded ``model`` (a ``llama_model`` pointer) given
    ``gpu_layers``, the routed experts of the first ``n_cpu_moe`` layers kept in RAM."""
    layers = int(llama_cpp.llama_model_n_layer(model))
    if hasattr(llama_cpp, "llama_model_n_layer_nextn"):
        layers += int(llama_cpp.llama_model_n_layer_nextn(model))
    offload = gpu_offload_supported()
    placement = placement_for(
        layers, gpu_layers if offload else 0, offload, list_devices() if offload else []
    )
    if placement.cpu_only or n_cpu_moe <= 0:
        return placement
    return replace(placement, experts_in_ram=min(n_cpu_moe, layers))


def default_devices() -> tuple[str, ...]:
    """The devices llama.cpp will offload layers to (empty: models run on the CPU only)."""
    if not gpu_offload_supported():
        return ()
    return tuple(device_label(d) for d in offload_devices(list_devices()))
