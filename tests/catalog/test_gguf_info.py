"""Reading GGUF headers without loading, and the memory estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.errors import ModelFileError
from desktop.catalog._fit import GPU, Hardware, Verdict, fit_model, recommend_quant
from desktop.catalog._gguf_info import read_gguf
from tests.fixtures.gguf_headers import llama_9b

pytestmark = pytest.mark.fast

GIB = 1024**3


def test_header_facts_of_the_tiny_chat_model(tiny_chat: Path) -> None:
    info = read_gguf(tiny_chat)
    assert (info.architecture, info.block_count, info.head_count, info.head_count_kv) == (
        "llama",
        2,
        4,
        2,
    )
    assert info.context_length == 2048 and info.key_length == 16
    assert info.chat_template and "add_generation_prompt" in info.chat_template
    # 2 layers x 2 KV heads x (16 + 16) x 2 bytes
    assert info.kv_bytes_per_token() == 256
    assert 0 < info.weight_bytes <= info.file_bytes
    assert info.estimate_bytes(4096) > info.estimate_bytes(1024) > info.weight_bytes


def test_embedding_model_header(tiny_embed: Path) -> None:
    info = read_gguf(tiny_embed)
    assert info.architecture == "bert" and info.pooling_type == 2 and info.chat_template is None


def test_gemma_header(gemma_path: Path) -> None:
    info = read_gguf(gemma_path)
    assert info.architecture == "gemma3" and info.file_type == "Q4_K_M"
    assert 200e6 < info.parameters < 300e6


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"PK\x03\x04 a zip file", "is not a GGUF model file"),
        (None, "model file not found"),
    ],
)
def test_foreign_and_missing_files(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "m.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ModelFileError, match=message):
        read_gguf(path)


def test_truncated_file_is_detected(tmp_path: Path, tiny_chat: Path) -> None:
    data = tiny_chat.read_bytes()
    for cut in (len(data) // 2, 40):
        truncated = tmp_path / f"cut{cut}.gguf"
        truncated.write_bytes(data[:cut])
        with pytest.raises(ModelFileError, match="truncated|damaged"):
            read_gguf(truncated)


def _hw(ram_gib: float, vram_gib: float = 0) -> Hardware:
    gpus = (GPU("test GPU", int(vram_gib * GIB), int(vram_gib * GIB)),) if vram_gib else ()
    return Hardware(int(ram_gib * GIB), int(ram_gib * GIB), 8, gpus)


def test_fit_verdicts_follow_memory(gemma_path: Path) -> None:
    info = read_gguf(gemma_path)
    assert fit_model(info, _hw(16, 8), gpu_offload=True).verdict is Verdict.GPU
    cpu = fit_model(info, _hw(16, 8), gpu_offload=False)
    assert cpu.verdict is Verdict.CPU and cpu.gpu_layers == 0
    assert fit_model(info, _hw(0.1), gpu_offload=False).verdict is Verdict.NO


def test_partial_offload_when_vram_is_short() -> None:
    big = llama_9b()
    plan = fit_model(big, _hw(32, 4), gpu_offload=True)
    assert plan.verdict is Verdict.PARTIAL and 0 < plan.gpu_layers < 40
    assert plan.context_length == 32768  # the trained context: RAM holds the rest
    tight = fit_model(llama_9b(weight_bytes=20 * GIB), _hw(24), gpu_offload=False)
    assert tight.cache_type == "q8_0"  # quantized before the context shrinks
    assert tight.context_length < 32768 or tight.verdict is Verdict.NO


def test_recommended_quant_depends_on_the_machine() -> None:
    sizes = {"Q4_K_M": 6 * GIB, "Q8_0": 10 * GIB}
    assert recommend_quant(sizes, _hw(64, 24), gpu_offload=True, default="Q4_K_M") == "Q8_0"
    assert recommend_quant(sizes, _hw(64), gpu_offload=False, default="Q4_K_M") == "Q4_K_M"
    assert recommend_quant(sizes, _hw(4), gpu_offload=False, default="Q4_K_M") is None
