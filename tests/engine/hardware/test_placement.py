"""Where a loaded model runs, in EdgeDesk's words: layers on devices, or the CPU only."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.engine import _loader as loader
from desktop.engine._hardware.devices import Device
from desktop.engine._hardware.placement import placement_for
from desktop.engine._types import ChatCall, GenerationParams, Message, ModelSpec, Placement

pytestmark = pytest.mark.fast

GIB = 1024**3
LLVMPIPE = Device(
    "Vulkan", "Vulkan0", "llvmpipe (LLVM 15.0.6, 256 bits)", "igpu", 30 * GIB, 31 * GIB
)
RTX = Device("CUDA", "CUDA0", "NVIDIA GeForce RTX 4070", "gpu", 11 * GIB, 12 * GIB)
RTX2 = Device("CUDA", "CUDA1", "NVIDIA GeForce RTX 4070", "gpu", 11 * GIB, 12 * GIB)
CPU_DEV = Device("CPU", "CPU", "AMD EPYC", "cpu", 30 * GIB, 31 * GIB)


def test_every_layer_on_one_device_reads_as_llama_cpp_counts_them() -> None:
    # Gemma 3 270M: 18 repeating layers and the output layer, all offloaded (-1: all).
    placed = placement_for(18, -1, True, [CPU_DEV, LLVMPIPE])
    assert placed == Placement(19, 19, ("Vulkan0 (llvmpipe)",))
    assert placed.describe() == "19/19 layers on Vulkan0 (llvmpipe)"
    assert placement_for(18, 99, True, [LLVMPIPE]).layers_offloaded == 19


def test_part_offloaded_says_how_many_stay_on_the_cpu() -> None:
    placed = placement_for(18, 10, True, [RTX, CPU_DEV])
    assert placed.describe() == "10/19 layers on CUDA0 (NVIDIA GeForce RTX 4070), 9 on the CPU"


def test_discrete_gpus_are_used_before_integrated_ones_and_all_of_them() -> None:
    placed = placement_for(18, -1, True, [LLVMPIPE, RTX, RTX2, CPU_DEV])
    assert placed.devices == ("CUDA0 (NVIDIA GeForce RTX 4070)", "CUDA1 (NVIDIA GeForce RTX 4070)")


def test_no_offload_no_device_or_no_layers_is_cpu_only() -> None:
    assert placement_for(18, -1, False, [LLVMPIPE]).describe() == "CPU only"
    assert placement_for(18, -1, True, [CPU_DEV]).describe() == "CPU only"
    assert placement_for(18, 0, True, [RTX]).describe() == "CPU only"


def test_a_loaded_model_and_its_answers_say_where_it_runs(tiny_chat: Path) -> None:
    engine = loader.load_engine(ModelSpec(tiny_chat, "tiny", context_length=256))
    try:
        placed = engine.report.placement
        # The tiny model has 2 repeating layers; this CPU build of llama.cpp offloads none.
        assert placed == Placement(layers_total=3, layers_offloaded=0)
        assert placed.describe() == "CPU only"
        chunks = list(
            engine.stream_chat(
                ChatCall.of([Message("user", "hi")], GenerationParams(max_tokens=2, temperature=0))
            )
        )
        assert chunks[-1].is_final and chunks[-1].placement == placed
        assert all(c.placement is None for c in chunks[:-1])
    finally:
        engine.close()
