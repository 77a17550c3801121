"""A mixture of experts on a real GPU backend: its routed experts kept in RAM by name.

The tiny MoE GGUF loads with every layer offloaded, once as is and once with the
experts of both layers overridden to the CPU (``n_cpu_moe``): llama.cpp's own buffer
report ("Vulkan0 model buffer size = ... MiB") must shrink by exactly the experts'
bytes the planner reads from the header, the CPU's grow by at least as much, and the
model must still answer. Runs on Mesa's software Vulkan device like the rest of tests/gpu
(``scripts/gpu-test.sh``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop.catalog._gguf_info import read_gguf
from desktop.engine._hardware.backend import BackendInfo
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import ChatCall, GenerationParams, Message
from tests.fixtures.tiny_moe import write_tiny_moe

pytestmark = pytest.mark.gpu
BUFFER = re.compile(r"(\S+) model buffer size =\s+([\d.]+) MiB")
MIB = 2**20


def _buffers(path: Path, n_cpu_moe: int, log: list[str]) -> dict[str, float]:
    """llama.cpp's model buffers (name -> MiB) for a load with every layer offloaded."""
    log.clear()
    engine = LlamaEngine(
        path, LoadOptions(context_length=256, parallel=1, gpu_layers=99, n_cpu_moe=n_cpu_moe)
    )
    try:
        call = ChatCall.of([Message("user", "hello")], GenerationParams(max_tokens=4, seed=1))
        answer = list(engine.stream_chat(call))
        assert answer[-1].is_final and answer[-1].usage is not None
        assert answer[-1].usage.completion_tokens >= 1
        assert not engine.placement.cpu_only
        assert engine.placement.experts_in_ram == n_cpu_moe
    finally:
        engine.close()
    sizes: dict[str, float] = {}
    for line in log:
        if (match := BUFFER.search(line)) is not None:
            sizes[match.group(1)] = sizes.get(match.group(1), 0.0) + float(match.group(2))
    return sizes


def test_the_experts_leave_the_gpus_buffer_for_the_cpus(
    gpu_backend: BackendInfo, tmp_path: Path, llama_log: list[str]
) -> None:
    path = write_tiny_moe(tmp_path / "tiny-moe.gguf")
    experts_mib = sum(read_gguf(path).expert_layer_bytes()) / MIB
    whole = _buffers(path, 0, llama_log)
    split = _buffers(path, 2, llama_log)
    print(f"\nbuffers without override: {whole}\nwith the experts in RAM: {split}")
    gpu = next(name for name in whole if not name.startswith("CPU"))
    cpu_whole = sum(v for k, v in whole.items() if k.startswith("CPU"))
    cpu_split = sum(v for k, v in split.items() if k.startswith("CPU"))
    assert whole[gpu] - split.get(gpu, 0.0) == pytest.approx(experts_mib, abs=0.02)
    # The CPU's mapped buffer is the file's range from its first to its last tensor, so
    # it grows by at least the experts (by more when tensors lie between them).
    assert cpu_split - cpu_whole >= experts_mib - 0.02
