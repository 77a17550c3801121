"""The shipped catalog validates, and bad catalogs are rejected with the entry named."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.errors import ConfigError, ModelNotFound
from desktop.catalog._entries import load_catalog

pytestmark = pytest.mark.fast

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_shipped_catalog_validates_and_has_the_required_models() -> None:
    catalog = load_catalog(REPO_ROOT / "models.toml")
    ids = {m.id for m in catalog}
    assert {
        "glm-edge-1.5b",
        "glm-edge-4b",
        "glm-4-9b-0414",
        "glm-z1-9b-0414",
        "glm-4.7-flash",
        "moonlight-16b-a3b",
        "kimi-linear-48b-a3b",
        "glm-4.5-air",
        "bge-small-en-v1.5",
        "bge-base-en-v1.5",
        "bge-large-zh-v1.5",
        "bge-m3",
        "bge-reranker-v2-m3",
    } <= ids
    assert {m.family for m in catalog} == {"glm", "kimi", "bge"}
    assert catalog.get("glm-4.5-air").quant().files[1].endswith("00002-of-00002.gguf")
    assert catalog.get("moonlight-16b-a3b").chat_template  # its GGUF lacks one
    assert catalog.get("glm-z1-9b-0414").reasoning == "think"


def test_packaged_copy_is_the_repo_file() -> None:
    assert load_catalog() == load_catalog(REPO_ROOT / "models.toml")


def test_unknown_id_suggests_close_matches() -> None:
    catalog = load_catalog()
    with pytest.raises(ModelNotFound, match="did you mean glm-edge-1.5b, glm-edge-4b"):
        catalog.get("glm-edge")
    with pytest.raises(ModelNotFound, match="has no quant 'Q2_K'; available: Q4_K_M, Q8_0"):
        catalog.get("glm-edge-4b").quant("Q2_K")


ENTRY = """
schema_version = 1
[[model]]
id = "x"
name = "X"
family = "glm"
kind = "chat"
repo = "a/b"
context_length = 4096
license = "mit"
tier = "laptop"
default_quant = "{default}"
quants = [{{ name = "Q4_K_M", files = ["{file}"] }}]
"""


@pytest.mark.parametrize(
    ("default", "file", "message"),
    [
        ("Q9", "x.gguf", "model 'x' : .*default_quant 'Q9' is not one of"),
        ("Q4_K_M", "x.bin", "'x.bin' is not a .gguf file"),
    ],
)
def test_invalid_entries_are_named(tmp_path: Path, default: str, file: str, message: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(ENTRY.format(default=default, file=file))
    with pytest.raises(ConfigError, match=message):
        load_catalog(path)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('mmproj = "mmproj.bin"', "must be a .gguf file"),
        ('mmproj = "sub/mmproj.gguf"', "at the top of the repo"),
        ("mmproj_size = 5", "need mmproj"),
        ('mmproj = "m.gguf"\nmmproj_sha256 = "ABC"', "not a lowercase SHA-256"),
    ],
)
def test_invalid_projectors_are_named(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "models.toml"
    text = ENTRY.format(default="Q4_K_M", file="x.gguf")
    path.write_text(text.replace("default_quant = ", extra + "\ndefault_quant = "))
    with pytest.raises(ConfigError, match=message):
        load_catalog(path)


def test_a_vision_entrys_fit_counts_its_projector() -> None:
    from desktop.catalog._fit import GPU, Hardware, Verdict
    from desktop.catalog._listing import catalog_row

    kimi = load_catalog().get("kimi-vl-a3b-thinking-2506")
    text_only = kimi.model_copy(update={"mmproj": None, "mmproj_size": None, "mmproj_sha256": None})
    # A GPU the model alone fits on, but not with its 0.6 GB projector beside it.
    gpu = GPU("test GPU", 16 * 10**9, 12_640_000_000)
    machine = Hardware(64 * 10**9, 64 * 10**9, 8, (gpu,))
    row = catalog_row(kimi, machine, gpu_offload=True, installed=lambda _id: None)
    assert (
        catalog_row(text_only, machine, gpu_offload=True, installed=lambda _id: None).fit
        == Verdict.GPU
    )
    assert row.fit == Verdict.PARTIAL
