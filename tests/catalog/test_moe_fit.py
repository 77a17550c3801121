"""The fit planner on real-size headers: mixture-of-experts placement and RAM/VRAM apart.

The headers are the catalog models' exact shapes and Q4_K_M types
(``tests/fixtures/real_shape.py``) written as sparse files with every tensor a hole:
a few MB on disk, nothing loaded, only the header read, as the planner does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.catalog._fit import (
    DEFAULT_CONTEXT,
    GPU,
    VRAM_RESERVE_BYTES,
    Hardware,
    Verdict,
    fit_model,
    with_memory,
)
from desktop.catalog._gguf_info import GGUFInfo, read_gguf
from tests.fixtures.real_shape import SHAPES, write_real_shape

GIB = 1024**3
AVX2 = frozenset({"Q4_0", "Q4_K", "IQ4_NL", "MXFP4"})  # what x86 with AVX2 repacks


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GGUFInfo]:
    folder = tmp_path_factory.mktemp("real-shape")
    return {
        name: read_gguf(write_real_shape(folder / f"{name}.gguf", name, header_only=True))
        for name in SHAPES
    }


def _machine(vram_gib: float = 0, ram_gib: float = 64, repack: frozenset[str] = AVX2) -> Hardware:
    gpus = (GPU("test GPU", int(vram_gib * GIB), int(vram_gib * GIB)),) if vram_gib else ()
    return Hardware(int(ram_gib * GIB), int(ram_gib * GIB), 8, gpus, repack)


def test_the_header_names_each_layers_experts(headers: dict[str, GGUFInfo]) -> None:
    flash, moonlight, dense = (
        headers["glm-4.7-flash"],
        headers["moonlight-16b-a3b"],
        headers["glm4-9b"],
    )
    assert (flash.expert_count, flash.expert_used_count, flash.block_count) == (64, 4, 47)
    assert flash.expert_layers == 46  # the first layer is dense
    sizes = moonlight.expert_layer_bytes()
    assert sizes[0] == 0 and len(set(sizes[1:])) <= 2  # Q4_K or Q6_K ffn_down_exps
    expected = sum(t.nbytes for t in SHAPES["moonlight-16b-a3b"]().tensors if "_exps." in t.name)
    assert sum(sizes) == expected  # the shared experts (_shexp) are not counted
    assert dense.expert_layers == 0 and dense.expert_count == 0


def test_a_moe_on_an_8_gb_gpu_keeps_all_but_some_experts_on_the_gpu(
    headers: dict[str, GGUFInfo],
) -> None:
    flash = headers["glm-4.7-flash"]
    plan = fit_model(flash, _machine(vram_gib=8), gpu_offload=True)
    assert plan.gpu_layers == plan.total_layers == 48  # attention etc. of every layer
    assert 0 < plan.experts_in_ram_layers < 46  # as many layers' experts as fit
    assert plan.n_cpu_moe == plan.experts_in_ram_layers + 1  # the first N blocks, one dense
    assert plan.vram_bytes <= 8 * GIB - VRAM_RESERVE_BYTES
    assert plan.verdict is Verdict.PARTIAL
    assert plan.where().startswith(f"experts of {plan.experts_in_ram_layers}/46 layers in RAM")
    # The context is fitted so that a long one does not push experts out to RAM.
    assert plan.context_length <= DEFAULT_CONTEXT
    # More VRAM: fewer experts in RAM; enough: none, all on the GPU.
    roomier = fit_model(flash, _machine(vram_gib=16), gpu_offload=True)
    assert roomier.experts_in_ram_layers < plan.experts_in_ram_layers
    whole = fit_model(flash, _machine(vram_gib=24), gpu_offload=True)
    assert whole.verdict is Verdict.GPU and whole.experts_in_ram_layers == 0
    assert whole.n_cpu_moe == 0


def test_the_whole_layer_planner_would_have_left_most_layers_on_the_cpu(
    headers: dict[str, GGUFInfo],
) -> None:
    flash = headers["glm-4.7-flash"]
    layers = fit_model(flash, _machine(vram_gib=8), gpu_offload=True, cpu_moe="none")
    assert layers.gpu_layers < 24 and layers.experts_in_ram_layers == 0


def test_every_expert_in_ram_needs_about_3_gb_of_vram(headers: dict[str, GGUFInfo]) -> None:
    flash = headers["glm-4.7-flash"]
    plan = fit_model(
        flash, _machine(vram_gib=8), gpu_offload=True, context_length=8192, cpu_moe="all"
    )
    assert plan.gpu_layers == 48 and plan.experts_in_ram_layers == 46
    assert plan.n_cpu_moe == 47
    assert 1.5 * GIB < plan.vram_bytes < 3.5 * GIB  # the "~3 GB instead of ~17"
    expert_bytes = sum(flash.expert_layer_bytes())
    assert plan.ram_bytes > expert_bytes  # experts, their repack copy, the embedding
    assert plan.repack_bytes > 0.7 * expert_bytes  # their Q4_K part is copied
    assert "the rest on the GPU" in plan.where()


def test_a_fixed_count_puts_the_first_layers_experts_in_ram(
    headers: dict[str, GGUFInfo],
) -> None:
    moonlight = headers["moonlight-16b-a3b"]
    plan = fit_model(moonlight, _machine(vram_gib=24), gpu_offload=True, cpu_moe=10)
    assert plan.n_cpu_moe == 10 and plan.experts_in_ram_layers == 9  # blk.0 is dense
    everything = fit_model(moonlight, _machine(vram_gib=24), gpu_offload=True)
    sizes = moonlight.expert_layer_bytes()
    moved = sum(sizes[:10])
    assert everything.vram_bytes - plan.vram_bytes == moved


def test_without_a_gpu_the_experts_are_in_ram_and_nothing_is_overridden(
    headers: dict[str, GGUFInfo],
) -> None:
    moonlight = headers["moonlight-16b-a3b"]
    plan = fit_model(moonlight, _machine(), gpu_offload=False)
    assert plan.gpu_layers == 0 and plan.vram_bytes == 0
    assert plan.experts_in_ram_layers == 26 and plan.n_cpu_moe == 0
    asked = fit_model(moonlight, _machine(), gpu_offload=False, cpu_moe="all")
    assert asked.n_cpu_moe == 27  # explicit: passed on, as llama-server does


def test_a_dense_model_ignores_the_expert_setting(headers: dict[str, GGUFInfo]) -> None:
    dense = headers["glm4-9b"]
    for setting in ("auto", "all", 3):
        plan = fit_model(dense, _machine(vram_gib=4), gpu_offload=True, cpu_moe=setting)
        assert plan.experts_in_ram_layers == 0 and plan.n_cpu_moe == 0
        assert 0 < plan.gpu_layers < plan.total_layers


def test_the_cpu_repack_copy_is_counted_in_ram(headers: dict[str, GGUFInfo]) -> None:
    """llama.cpp copies Q4_K matrices kept in RAM into its CPU_REPACK buffer on AVX2
    (measured 3.1 GB beside the 9B's 6.3 GB file): the plan counts that copy, and only
    for what stays in RAM (never the token embedding, which is only looked up)."""
    dense = headers["glm4-9b"]
    q4_k = sum(
        t.nbytes
        for t in SHAPES["glm4-9b"]().tensors
        if t.type.name == "Q4_K" and t.name != "token_embd.weight"
    )
    on_cpu = fit_model(dense, _machine(), gpu_offload=False, context_length=8192)
    assert on_cpu.repack_bytes == q4_k
    assert 3.0 * GIB < q4_k < 3.2 * GIB
    without = fit_model(dense, _machine(repack=frozenset()), gpu_offload=False, context_length=8192)
    assert on_cpu.estimated_bytes - without.estimated_bytes == q4_k
    on_gpu = fit_model(dense, _machine(vram_gib=16), gpu_offload=True, context_length=8192)
    assert on_gpu.repack_bytes == 0 and on_gpu.ram_bytes < 0.5 * GIB  # the embedding


def test_another_machine_is_planned_from_its_sizes() -> None:
    here = Hardware(16 * GIB, 10 * GIB, 4, (), AVX2)
    there = with_memory(here, gpu_bytes=8 * GIB, ram_bytes=32 * GIB)
    assert there.vram_free_bytes == 8 * GIB and there.ram_available_bytes == 32 * GIB
    assert there.repack_types == AVX2
    assert with_memory(there, gpu_bytes=0, ram_bytes=None).gpus == ()


def test_the_generated_shapes_are_the_published_files_sizes(
    headers: dict[str, GGUFInfo],
) -> None:
    """Exact shapes and Q4_K_M types give the published files' sizes (the header's
    vocabulary and metadata aside): GLM-4-9B-0414 6,166,574,464 bytes (bartowski),
    Kimi-VL-A3B-Thinking-2506 10,540,747,680 (ggml-org, the MLA layout)."""
    assert headers["glm4-9b"].weight_bytes == pytest.approx(6_166_574_464, rel=0.005)
    assert headers["moonlight-16b-a3b"].weight_bytes == pytest.approx(10_540_747_680, rel=0.005)
    assert headers["glm4-9b"].file_type == "Q4_K_M"


@pytest.mark.parametrize("kind", ["Q4_K", "Q6_K", "Q5_0", "Q8_0"])
def test_the_generators_random_blocks_decode_to_finite_values(kind: str) -> None:
    import numpy as np
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize

    from tests.fixtures.real_shape import _random_blocks

    qtype = GGMLQuantizationType[kind]
    raw = np.frombuffer(_random_blocks(qtype, 256, np.random.default_rng(1)), dtype=np.uint8)
    values = dequantize(raw, qtype)
    assert np.isfinite(values).all() and 0 < np.abs(values).max() < 16


def test_a_vision_projector_loads_on_the_gpu_beside_the_experts(
    headers: dict[str, GGUFInfo], tmp_path: Path
) -> None:
    from desktop.base.config import EngineSettings
    from desktop.resolve._plan import fit

    projector = tmp_path / "mmproj.gguf"
    with projector.open("wb") as handle:
        handle.truncate(600 * 1024**2)  # Kimi-VL's projector: about 0.6 GB
    moonlight, machine = headers["moonlight-16b-a3b"], _machine(vram_gib=8)
    settings = EngineSettings(worker_process=False)
    text = fit(moonlight, machine, settings, gpu_offload=True, context_length=8192)
    vision = fit(
        moonlight, machine, settings, gpu_offload=True, context_length=8192, projector=projector
    )
    assert vision.gpu_layers == text.gpu_layers == 28
    assert vision.experts_in_ram_layers > text.experts_in_ram_layers  # room made for it
    assert vision.vram_bytes <= 8 * GIB - VRAM_RESERVE_BYTES


def test_a_deepseek2_file_from_before_the_mla_split_caches_every_head(
    headers: dict[str, GGUFInfo], tmp_path: Path
) -> None:
    """Moonlight's early GGUFs (the catalog's mmnga file) have one attn_kv_b and no
    key_length_mla: llama.cpp runs them as multi-head attention, caching 16 heads' K
    (192) and V (128) per layer instead of one 576-wide latent."""
    legacy = read_gguf(
        write_real_shape(tmp_path / "legacy.gguf", "moonlight-16b-a3b-legacy", header_only=True)
    )
    assert legacy.kv_bytes_per_token() == 27 * 16 * (192 + 128) * 2
    assert headers["moonlight-16b-a3b"].kv_bytes_per_token() == 27 * (512 + 64) * 2
    assert legacy.weight_bytes == pytest.approx(10_537_205_632, rel=0.001)  # mmnga's file


def test_the_verdict_before_download_counts_the_repack_copy_too() -> None:
    """GLM-4-9B-0414 Q4_K_M (6.17 GB) measured 9.2 GiB of RSS on an AVX-512 CPU: a
    machine with 8.5 GiB free does not run it, though the file alone would fit."""
    from desktop.catalog._fit import fit_from_size

    size = 6_166_574_464
    small = _machine(ram_gib=8.5)
    assert fit_from_size(size, small, gpu_offload=False, quant="Q4_K_M") is Verdict.NO
    unknown = _machine(ram_gib=8.5, repack=frozenset())  # a CPU that repacks nothing
    assert fit_from_size(size, unknown, gpu_offload=False, quant="Q4_K_M") is Verdict.CPU
    assert fit_from_size(size, _machine(ram_gib=12), gpu_offload=False, quant="Q4_K_M") is (
        Verdict.CPU
    )
    # Wholly on a GPU nothing is copied.
    assert fit_from_size(size, _machine(vram_gib=8, ram_gib=2), gpu_offload=True) is Verdict.GPU


def _expert_bytes(shape: str, layers: range, kind: str | None = None) -> int:
    """Bytes of the routed experts of ``layers`` in the generated ``shape`` (of one
    ggml type when ``kind`` is given)."""
    return sum(
        t.nbytes
        for t in SHAPES[shape]().tensors
        if "_exps." in t.name
        and int(t.name.split(".")[1]) in layers
        and (kind is None or t.type.name == kind)
    )


def test_glm_4_5_air_has_45_expert_layers_and_its_nextn_layer_is_not_loaded(
    headers: dict[str, GGUFInfo],
) -> None:
    """GLM-4.5-Air (glm4moe): 46 layers, the first dense, then blk.46, a next-token
    prediction layer with experts of its own that llama.cpp skips unless asked for
    speculative decoding: neither its weights nor a KV cache for it are counted."""
    air = headers["glm-4.5-air"]
    assert air.architecture == "glm4moe"
    assert (air.expert_count, air.expert_used_count, air.block_count) == (128, 8, 47)
    sizes = air.expert_layer_bytes()
    assert air.expert_layers == 45 and sizes[0] == 0 and sizes[46] == 0
    assert sum(sizes) == _expert_bytes("glm-4.5-air", range(1, 46))
    everything = sum(t.nbytes for t in SHAPES["glm-4.5-air"]().tensors)
    nextn = sum(t.nbytes for t in SHAPES["glm-4.5-air"]().tensors if t.name.startswith("blk.46."))
    assert 1.5e9 < nextn < 2.0e9  # 128 experts of its own (Q8_0 ffn_down: a "more bits" layer)
    assert air.weight_bytes == everything - nextn
    assert air.kv_layers == 46
    assert air.kv_bytes_per_token() == 46 * 8 * (128 + 128) * 2  # 8 KV heads of 128


def test_kimi_linear_caches_only_its_attention_layers(headers: dict[str, GGUFInfo]) -> None:
    """Kimi-Linear-48B-A3B: 7 of its 27 layers are MLA attention with a cache of one
    576-wide latent per token; the 20 Kimi Delta Attention layers keep a fixed-size
    state instead. 26 layers of 256 routed experts."""
    kimi = headers["kimi-linear-48b-a3b"]
    assert kimi.architecture == "kimi-linear"
    assert (kimi.expert_count, kimi.expert_used_count, kimi.block_count) == (256, 8, 27)
    assert kimi.expert_layers == 26 and kimi.expert_layer_bytes()[0] == 0
    assert sum(kimi.expert_layer_bytes()) == _expert_bytes("kimi-linear-48b-a3b", range(27))
    assert kimi.kv_layers == 7
    assert kimi.kv_bytes_per_token() == 7 * (512 + 64) * 2


@pytest.mark.parametrize(
    ("shape", "expert_layers", "on_8_gb", "on_16_gb"),
    [
        # Each layer's experts are ~1.25 GB (Air) / ~1.0 GB (Kimi-Linear): a few fit.
        ("glm-4.5-air", 45, range(40, 46), range(33, 42)),
        ("kimi-linear-48b-a3b", 26, range(18, 26), range(10, 20)),
    ],
)
def test_the_big_moes_keep_every_layer_on_the_gpu_and_most_experts_in_ram(
    headers: dict[str, GGUFInfo],
    shape: str,
    expert_layers: int,
    on_8_gb: range,
    on_16_gb: range,
) -> None:
    """On 8 and 16 GB GPUs (with 128 GB of RAM) all layers' attention, norms, routers,
    shared experts and the KV cache go to the GPU, and as many layers' experts as fit;
    the rest stay in RAM, where llama.cpp also copies their Q4_K part (AVX2)."""
    info = headers[shape]
    plans = []
    for vram in (8, 16):
        plan = fit_model(info, _machine(vram_gib=vram, ram_gib=128), gpu_offload=True)
        assert plan.gpu_layers == plan.total_layers == info.block_count + 1
        assert plan.expert_layers == expert_layers
        assert plan.vram_bytes <= vram * GIB - VRAM_RESERVE_BYTES
        assert plan.verdict is Verdict.PARTIAL
        assert plan.where().startswith(
            f"experts of {plan.experts_in_ram_layers}/{expert_layers} layers in RAM"
        )
        # The experts of the first N blocks (one dense) in RAM, and their Q4_K part
        # copied by llama.cpp's repack: exactly what the planner counts.
        layers = range(plan.n_cpu_moe)
        assert plan.experts_in_ram_layers == plan.n_cpu_moe - 1
        assert plan.repack_bytes == _expert_bytes(shape, layers, "Q4_K")
        assert plan.ram_bytes > _expert_bytes(shape, layers) + plan.repack_bytes
        plans.append(plan)
    small, large = plans
    assert small.experts_in_ram_layers in on_8_gb
    assert large.experts_in_ram_layers in on_16_gb
    assert large.experts_in_ram_layers < small.experts_in_ram_layers


def test_every_expert_in_ram_leaves_glm_4_5_air_a_few_gb_of_vram(
    headers: dict[str, GGUFInfo],
) -> None:
    """--cpu-moe on GLM-4.5-Air at 8K context: attention, shared experts, output and
    KV cache of 46 layers on the GPU (about 5 GB), 60+ GB of experts and their repack
    copy in RAM."""
    air = headers["glm-4.5-air"]
    plan = fit_model(
        air,
        _machine(vram_gib=8, ram_gib=128),
        gpu_offload=True,
        context_length=8192,
        cpu_moe="all",
    )
    assert plan.gpu_layers == 48 and plan.experts_in_ram_layers == 45
    assert 3 * GIB < plan.vram_bytes < 7 * GIB
    assert plan.repack_bytes == _expert_bytes("glm-4.5-air", range(46), "Q4_K")  # not blk.46
    assert plan.ram_bytes > sum(air.expert_layer_bytes()) + plan.repack_bytes


@pytest.mark.parametrize(
    ("shape", "model_id"),
    [
        ("glm-4.7-flash", "glm-4.7-flash"),
        ("glm-4.5-air", "glm-4.5-air"),
        ("moonlight-16b-a3b-legacy", "moonlight-16b-a3b"),
        ("kimi-linear-48b-a3b", "kimi-linear-48b-a3b"),
        ("moonlight-16b-a3b", "kimi-vl-a3b-thinking-2506"),
    ],
)
def test_the_catalogs_expert_share_is_the_real_shapes(
    headers: dict[str, GGUFInfo], tmp_path: Path, shape: str, model_id: str
) -> None:
    """``experts_share`` (routed-expert bytes of the file, for the verdict before
    download) agrees with the generated file at the real shape within 2 points, and
    the catalog's file size with the generated one within 3%."""
    from desktop.catalog import load_catalog

    entry = load_catalog().get(model_id)
    generated = SHAPES[shape]()
    experts = sum(t.nbytes for t in generated.tensors if "_exps." in t.name)
    assert entry.experts_share is not None
    assert entry.experts_share == pytest.approx(experts / generated.data_bytes, abs=0.02)
    size = next(q.size for q in entry.quants if q.name == "Q4_K_M")
    assert size == pytest.approx(generated.data_bytes, rel=0.03)
