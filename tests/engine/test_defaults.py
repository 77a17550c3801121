"""Engine defaults that match llama-server: physical cores, 4 slots of 8K, fitted to memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from desktop.base.config import Paths
from desktop.base.errors import ConfigError
from desktop.catalog._fit import GPU, Hardware, Verdict, fit_model
from desktop.catalog._gguf_info import read_gguf
from desktop.engine._types import LocalPlan, ModelSpec
from desktop.root.context import build_context
from tests.fixtures.gguf_headers import llama_9b

pytestmark = pytest.mark.fast

GIB = 1024**3


@dataclass(frozen=True)
class _Policy:
    values: Mapping[str, Any]

    def forced(self) -> Mapping[str, Any]:
        return self.values


def _spec_options(
    home: Path,
    model: Path,
    settings: str = "",
    policy: Mapping[str, Any] | None = None,
    cli: Mapping[str, Any] | None = None,
) -> tuple[ModelSpec, LocalPlan]:
    paths = Paths.from_env({"EDGEDESK_HOME": str(home)})
    paths.ensure()
    paths.settings_file.write_text(settings)
    ctx = build_context(
        environ={"EDGEDESK_HOME": str(home)}, policy=_Policy(policy or {}), cli_settings=cli
    )
    try:
        spec = ctx.resolver(str(model))
    finally:
        ctx.close()
    assert isinstance(spec.plan, LocalPlan)
    return spec, spec.plan


def test_default_plan_uses_every_physical_core_and_four_slots(
    tmp_path: Path, gemma_path: Path
) -> None:
    spec, options = _spec_options(tmp_path / "home", gemma_path)
    cores = psutil.cpu_count(logical=False) or psutil.cpu_count()
    assert spec.threads == cores and options.batch_threads == cores
    assert options.parallel == 4
    # Gemma 3 270M was trained on 32K: the four slots share one cache of all of it.
    assert spec.context_length == 32768 and options.cache_type == "f16"
    # Prompt lookup is on for Gemma 3: its rewrite benchmark measured a gain.
    assert options.lookup_draft == 32


def test_prompt_lookup_is_off_for_a_family_never_measured(tmp_path: Path, tiny_chat: Path) -> None:
    _, options = _spec_options(tmp_path / "home", tiny_chat)
    assert read_gguf(tiny_chat).architecture != "gemma3"
    assert options.lookup_draft == 0
    _, chosen = _spec_options(tmp_path / "home2", tiny_chat, "[engine]\nprompt_lookup_tokens = 4\n")
    assert chosen.lookup_draft == 4


def test_prompt_lookup_can_be_turned_off_for_gemma(tmp_path: Path, gemma_path: Path) -> None:
    _, options = _spec_options(
        tmp_path / "home", gemma_path, "[engine]\nprompt_lookup_tokens = 0\n"
    )
    assert options.lookup_draft == 0


def test_settings_and_flags_override_the_defaults(tmp_path: Path, gemma_path: Path) -> None:
    spec, options = _spec_options(
        tmp_path / "home",
        gemma_path,
        '[engine]\nthreads = 1\nbatch_threads = 2\nparallel = 2\ncache_type = "q8_0"\n'
        "prompt_lookup_tokens = 8\nprompt_cache_disk_mb = 3\n",
        cli={"engine.context_length": 2048},
    )  # what --ctx sets
    assert (spec.threads, options.batch_threads, options.parallel) == (1, 2, 2)
    assert spec.context_length == 2048
    assert (options.cache_type, options.lookup_draft) == ("q8_0", 8)
    assert options.prompt_cache_disk_bytes == 3 * 1024 * 1024
    assert options.prompt_cache_dir == tmp_path / "home" / "cache" / "prompt-cache"


def test_a_sliding_window_model_keeps_only_its_window_unless_the_setting_says(
    tmp_path: Path, gemma_path: Path
) -> None:
    _, options = _spec_options(tmp_path / "home", gemma_path)
    assert options.swa_full is False  # llama-server's default: the window only
    _, full = _spec_options(tmp_path / "home2", gemma_path, "[engine]\nswa_full_cache = true\n")
    assert full.swa_full is True
    assert full.estimated_bytes > 4 * options.estimated_bytes // 3


def test_policy_caps_the_number_of_slots(tmp_path: Path, gemma_path: Path) -> None:
    _, options = _spec_options(
        tmp_path / "home", gemma_path, "[engine]\nparallel = 8\n", policy={"engine.max_parallel": 2}
    )
    assert options.parallel == 2


@pytest.mark.parametrize("value", ["0", "65", '"four"'])
def test_a_bad_parallel_setting_is_refused_with_its_name(
    tmp_path: Path, gemma_path: Path, value: str
) -> None:
    with pytest.raises(ConfigError, match="parallel"):
        _spec_options(tmp_path / "home", gemma_path, f"[engine]\nparallel = {value}\n")


def test_the_slots_share_the_trained_context_when_memory_allows() -> None:
    roomy = Hardware(64 * GIB, 64 * GIB, 8)
    plan = fit_model(llama_9b(), roomy, gpu_offload=False, parallel=4)
    assert (plan.context_length, plan.parallel, plan.cache_type) == (32768, 4, "f16")
    assert plan.estimated_bytes == llama_9b().estimate_bytes(32768)  # one cache, not four


def test_tight_memory_quantizes_the_cache_before_shrinking_the_context() -> None:
    info = llama_9b(weight_bytes=12 * GIB)
    # Room for the trained 32K only with a q8_0 cache (about half of f16's bytes).
    ram = int((info.estimate_bytes(32768, "q8_0") + GIB // 8) / 0.85)
    assert info.estimate_bytes(32768) > ram * 0.85
    plan = fit_model(info, Hardware(ram, ram, 8), gpu_offload=False, parallel=4)
    assert (plan.context_length, plan.parallel, plan.cache_type) == (32768, 4, "q8_0")
    assert "KV cache q8_0" in plan.reason
    # Tighter still: q8_0, then the context halves until it fits; slots stay.
    ram = int((info.estimate_bytes(8192, "q8_0") + GIB // 8) / 0.85)
    plan = fit_model(info, Hardware(ram, ram, 8), gpu_offload=False, parallel=4)
    assert (plan.context_length, plan.parallel, plan.cache_type) == (8192, 4, "q8_0")
    # An explicit cache type is kept: f16 gives a smaller context instead.
    f16 = fit_model(info, Hardware(ram, ram, 8), gpu_offload=False, parallel=4, cache_type="f16")
    assert f16.cache_type == "f16" and f16.context_length < 8192


def test_a_model_that_fits_the_gpu_keeps_all_its_layers_there() -> None:
    # 6 GiB of weights on an 8 GiB GPU: the trained 32K would spill layers to the CPU,
    # so the context stops where every layer still fits (never below 8192).
    gpu = GPU("test GPU", 8 * GIB, 8 * GIB)
    plan = fit_model(
        llama_9b(), Hardware(64 * GIB, 64 * GIB, 8, (gpu,)), gpu_offload=True, parallel=4
    )
    assert plan.verdict is Verdict.GPU and plan.gpu_layers == llama_9b().block_count + 1
    assert 8192 <= plan.context_length < 32768


def test_gemma_fits_four_slots_on_a_small_machine(gemma_path: Path) -> None:
    plan = fit_model(
        read_gguf(gemma_path), Hardware(4 * GIB, 4 * GIB, 2), gpu_offload=False, parallel=4
    )
    assert (plan.context_length, plan.parallel) == (32768, 4)
