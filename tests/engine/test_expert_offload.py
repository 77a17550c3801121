"""A mixture-of-experts model's routed experts kept in RAM by name, and the CPU repack
copy the planner counts, checked against what llama.cpp itself reports.

This build has no GPU backend, so every weight is in RAM anyway: what shows that the
override reached llama.cpp is its own log ("tensor blk.0.ffn_up_exps.weight ... buffer
type overridden to CPU", one line per matched tensor), read with a log callback of our
own while the tiny MoE GGUF loads through the loader as a plan says. The GPU side (the
experts' bytes moving from the GPU's buffer to the CPU's) is tests/gpu/test_offload.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from desktop.catalog._fit import Hardware, fit_model
from desktop.catalog._gguf_info import read_gguf
from desktop.engine._loader import load_engine
from desktop.engine._offload import EXPERTS_PATTERN, ExpertOverrides, expert_pattern, repack_types
from desktop.engine._types import ChatCall, GenerationParams, LocalPlan, Message, ModelSpec
from tests.fixtures.tiny_moe import write_tiny_moe

OVERRIDDEN = re.compile(r"tensor (\S+) \(.*\) buffer type overridden to CPU")
BUFFER = re.compile(r"(\w+) model buffer size =\s+([\d.]+) MiB")


@pytest.fixture(scope="module")
def tiny_moe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_moe(tmp_path_factory.mktemp("moe") / "tiny-moe.gguf")


def _spec(path: Path, n_cpu_moe: int) -> ModelSpec:
    return ModelSpec(
        path, "tiny-moe", context_length=256, plan=LocalPlan(parallel=1, n_cpu_moe=n_cpu_moe)
    )


def test_the_pattern_names_only_the_routed_experts_of_the_first_layers() -> None:
    pattern = re.compile(expert_pattern(2) or "")
    names = {
        "blk.0.ffn_up_exps.weight": True,
        "blk.1.ffn_down_exps.weight": True,
        "blk.1.ffn_gate_exps.weight": True,
        "blk.2.ffn_up_exps.weight": False,  # not among the first two
        "blk.12.ffn_up_exps.weight": False,  # "1" must not match the start of "12"
        "blk.0.ffn_up_shexp.weight": False,  # shared experts stay with the layer
        "blk.0.ffn_gate_inp.weight": False,  # the router too
        "blk.0.attn_q.weight": False,
    }
    assert {name: bool(pattern.search(name)) for name in names} == names
    assert expert_pattern(0) is None
    assert re.search(EXPERTS_PATTERN, "blk.40.ffn_gate_exps.weight")  # llama-server's --cpu-moe
    assert ExpertOverrides(0).pointer is None
    assert ExpertOverrides(3).pointer is not None


@pytest.mark.parametrize("n_cpu_moe", [0, 1, 2])
def test_the_plans_experts_are_overridden_to_the_cpu_as_the_model_loads(
    tiny_moe: Path, llama_log: list[str], n_cpu_moe: int
) -> None:
    engine = load_engine(_spec(tiny_moe, n_cpu_moe))
    try:
        overridden = sorted(m.group(1) for line in llama_log if (m := OVERRIDDEN.search(line)))
        expected = sorted(
            f"blk.{layer}.ffn_{part}_exps.weight"
            for layer in range(n_cpu_moe)
            for part in ("gate", "up", "down")
        )
        assert overridden == expected
        assert engine.report.n_cpu_moe == n_cpu_moe
        answer = list(
            engine.stream_chat(
                ChatCall.of([Message("user", "hello")], GenerationParams(max_tokens=4, seed=1))
            )
        )
        assert answer[-1].is_final and answer[-1].usage is not None
        assert answer[-1].usage.completion_tokens >= 1
    finally:
        engine.close()


def test_the_planned_repack_copy_is_the_buffer_llama_cpp_makes(
    tmp_path: Path, llama_log: list[str]
) -> None:
    """Q4_0 weights kept in RAM are copied into llama.cpp's CPU_REPACK buffer on AVX2 and
    ARM CPUs: the planner's count of that copy is the buffer's size, to the 10 KiB its
    log rounds to (the token embedding is only looked up: not copied)."""
    types = repack_types()
    if "Q4_0" not in types:
        pytest.skip("this CPU's llama.cpp does not repack Q4_0")
    path = write_tiny_moe(tmp_path / "q4.gguf", n_embd=256, q4_0=True)
    info = read_gguf(path)
    plan = fit_model(
        info, Hardware(2**34, 2**34, 2, (), types), gpu_offload=False, context_length=256
    )
    engine = load_engine(_spec(path, 2))
    engine.close()
    buffers = {m.group(1): float(m.group(2)) for line in llama_log if (m := BUFFER.search(line))}
    assert plan.repack_bytes > 0
    assert buffers["CPU_REPACK"] == pytest.approx(plan.repack_bytes / 2**20, abs=0.01)


def test_a_moe_that_does_not_load_tries_every_expert_in_ram_first(
    tiny_moe: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of VRAM at load (another program took it since the plan): the retry keeps
    every layer on the GPU and moves all the experts to RAM, and says so. A GPU that
    fills up is what cannot happen here: the build is told it offloads, and the first
    load fails on cue."""
    from desktop.base.errors import ModelLoadError
    from desktop.engine import _loader as loader

    tried: list[tuple[int, int]] = []

    class ShortOfVram(loader.LoadedEngine):
        def __init__(self, path: Path, options: Any, **kwargs: Any) -> None:
            tried.append((options.gpu_layers, options.n_cpu_moe))
            if options.n_cpu_moe < 3:
                raise ModelLoadError("failed to allocate Vulkan0 buffer of size 1234")
            super().__init__(path, options, **kwargs)

    monkeypatch.setattr(loader, "gpu_offload_supported", lambda: True)
    spec = ModelSpec(
        tiny_moe,
        "tiny-moe",
        context_length=256,
        gpu_layers=3,
        plan=LocalPlan(parallel=1, n_cpu_moe=1),
    )
    engine = loader.load_engine(spec, open_engine=ShortOfVram)
    try:
        assert tried == [(3, 1), (3, 3)]
        assert engine.report.n_cpu_moe == 3 and engine.report.gpu_layers == 3
        assert any("every expert in RAM" in note for note in engine.report.notes)
    finally:
        engine.close()


UNUSED = re.compile(r"model has unused tensor (\S+) \(size = (\d+) bytes\)")


@pytest.mark.slow
def test_glm4moe_at_real_widths_has_its_experts_overridden_and_its_nextn_layer_skipped(
    tmp_path: Path, llama_log: list[str]
) -> None:
    """GLM-4.5-Air's shape (arch glm4moe: n_embd 4096, 96 heads, experts of 1408, the
    real vocabulary) cut to a dense layer, a MoE layer and the next-token-prediction
    layer, with 16 of its 128 experts: llama.cpp loads it with ``--n-cpu-moe 3`` as
    llama-server would, overrides exactly blk.1's three expert stacks to the CPU,
    skips every tensor of blk.2 (the nextn layer, which the planner leaves out too),
    and copies into its repack buffer what the planner says it will. Every tensor is a
    hole (zeros): a few MB on disk, a few hundred MB of repack copy in RAM."""
    from tests.fixtures.real_shape import glm_4_5_air, write_real_shape

    path = write_real_shape(
        tmp_path / "glm4moe.gguf", glm_4_5_air(n_layer=2, experts=16, nextn=1), header_only=True
    )
    info = read_gguf(path)
    assert (info.architecture, info.block_count, info.expert_layers) == ("glm4moe", 3, 1)
    engine = load_engine(_spec(path, 3))
    try:
        overridden = sorted(m.group(1) for line in llama_log if (m := OVERRIDDEN.search(line)))
        assert overridden == [f"blk.1.ffn_{part}_exps.weight" for part in ("down", "gate", "up")]
        skipped = {m.group(1): int(m.group(2)) for line in llama_log if (m := UNUSED.search(line))}
        assert skipped and all(name.startswith("blk.2.") for name in skipped)
        assert "blk.2.ffn_up_exps.weight" in skipped
        answer = list(
            engine.stream_chat(
                ChatCall.of([Message("user", "hello")], GenerationParams(max_tokens=2, seed=1))
            )
        )
        assert answer[-1].is_final and answer[-1].usage is not None
    finally:
        engine.close()
    types = repack_types()
    buffers = {m.group(1): float(m.group(2)) for line in llama_log if (m := BUFFER.search(line))}
    plan = fit_model(
        info, Hardware(2**36, 2**36, 2, (), types), gpu_offload=False, context_length=256
    )
    if "Q4_K" in types:  # AVX2 and ARM: llama.cpp's copy is what the planner counts
        assert buffers["CPU_REPACK"] == pytest.approx(plan.repack_bytes / 2**20, rel=0.01)


KV_BUFFER = re.compile(r"llama_kv_cache:\s+(\w+) KV buffer size =\s+([\d.]+) MiB")


@pytest.mark.slow
def test_kimi_linear_at_real_widths_caches_only_its_attention_layers(
    tmp_path: Path, llama_log: list[str]
) -> None:
    """Kimi-Linear-48B-A3B's shape (arch kimi-linear: n_embd 2304, KDA heads of 128, MLA
    latent 512 + 64, experts of 1024, the real vocabulary) cut to 4 layers, the fourth
    MLA attention and the rest Kimi Delta Attention, with 16 of its 256 experts:
    llama.cpp loads the generated tensors, overrides the experts of blk.1 and blk.2 for
    ``--n-cpu-moe 3``, and its KV cache is the planner's: one layer's latent per token
    (the KDA layers keep a recurrent state instead)."""
    from tests.fixtures.real_shape import kimi_linear_48b_a3b, write_real_shape

    path = write_real_shape(
        tmp_path / "kimi-linear.gguf", kimi_linear_48b_a3b(n_layer=4, experts=16), header_only=True
    )
    info = read_gguf(path)
    assert (info.architecture, info.expert_layers, info.kv_layers) == ("kimi-linear", 3, 1)
    engine = load_engine(_spec(path, 3))
    try:
        answer = list(
            engine.stream_chat(
                ChatCall.of([Message("user", "hello")], GenerationParams(max_tokens=2, seed=1))
            )
        )
        assert answer[-1].is_final and answer[-1].usage is not None
    finally:
        engine.close()
    overridden = sorted(m.group(1) for line in llama_log if (m := OVERRIDDEN.search(line)))
    assert overridden == sorted(
        f"blk.{layer}.ffn_{part}_exps.weight" for layer in (1, 2) for part in ("down", "gate", "up")
    )
    kv = [float(m.group(2)) for line in llama_log if (m := KV_BUFFER.search(line))]
    assert kv and sum(kv) == pytest.approx(info.kv_bytes(256) / 2**20, abs=0.01)
