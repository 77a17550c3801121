"""Engine defaults that match llama-server: physical cores, 4 slots of 8K, fitted to memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from desktop.app import build_context
from desktop.catalog.gguf_info import GGUFInfo, read_gguf
from desktop.catalog.hardware import Hardware, fit_model
from desktop.config import Paths
from desktop.errors import ConfigError

GIB = 1024**3


@dataclass(frozen=True)
class _Policy:
    values: Mapping[str, Any]

    def forced(self) -> Mapping[str, Any]:
        return self.values


def _spec_options(home: Path, model: Path, settings: str = "",
                  policy: Mapping[str, Any] | None = None,
                  cli: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    paths = Paths.from_env({"EDGEDESK_HOME": str(home)})
    paths.ensure()
    paths.settings_file.write_text(settings)
    ctx = build_context(environ={"EDGEDESK_HOME": str(home)}, policy=_Policy(policy or {}),
                        cli_settings=cli)
    try:
        spec = ctx.resolver(str(model))
    finally:
        ctx.close()
    return spec, spec.options


def test_default_plan_uses_every_physical_core_and_four_slots(tmp_path: Path,
                                                              gemma_path: Path) -> None:
    spec, options = _spec_options(tmp_path / "home", gemma_path)
    cores = psutil.cpu_count(logical=False) or psutil.cpu_count()
    assert spec.threads == cores and options["batch_threads"] == cores
    assert options["parallel"] == 4
    # Gemma 3 270M was trained on 32K; each slot gets the capped default of 8192.
    assert spec.context_length == 8192


def test_settings_and_flags_override_the_defaults(tmp_path: Path, gemma_path: Path) -> None:
    spec, options = _spec_options(
        tmp_path / "home", gemma_path,
        "[engine]\nthreads = 1\nbatch_threads = 2\nparallel = 2\n",
        cli={"engine.context_length": 2048})  # what --ctx sets
    assert (spec.threads, options["batch_threads"], options["parallel"]) == (1, 2, 2)
    assert spec.context_length == 2048


def test_policy_caps_the_number_of_slots(tmp_path: Path, gemma_path: Path) -> None:
    _, options = _spec_options(tmp_path / "home", gemma_path, "[engine]\nparallel = 8\n",
                               policy={"engine.max_parallel": 2})
    assert options["parallel"] == 2


@pytest.mark.parametrize("value", ["0", "65", '"four"'])
def test_a_bad_parallel_setting_is_refused_with_its_name(tmp_path: Path, gemma_path: Path,
                                                         value: str) -> None:
    with pytest.raises(ConfigError, match="parallel"):
        _spec_options(tmp_path / "home", gemma_path, f"[engine]\nparallel = {value}\n")


def _big() -> GGUFInfo:
    return GGUFInfo(Path("x"), "llama", None, 9_000_000_000, 6 * GIB, 6 * GIB, 32768, 40,
                    4096, 32, 8, 128, 128, None, None, None, "Q4_K_M", None, 1)


def test_every_slot_gets_the_per_slot_context_within_memory() -> None:
    roomy = Hardware(64 * GIB, 64 * GIB, 8)
    plan = fit_model(_big(), roomy, gpu_offload=False, parallel=4)
    assert (plan.context_length, plan.parallel) == (8192, 4)
    assert plan.estimated_bytes == _big().estimate_bytes(4 * 8192)  # one cache for 4 slots


def test_tight_memory_shrinks_the_context_then_the_slots() -> None:
    info = replace(_big(), weight_bytes=12 * GIB)
    # Enough for about 8K tokens of KV in all: 4 slots of 2K, not 4 of 8K.
    ram = int((info.estimate_bytes(8192) + GIB // 8) / 0.85)
    plan = fit_model(info, Hardware(ram, ram, 8), gpu_offload=False, parallel=4)
    assert (plan.context_length, plan.parallel) == (2048, 4)
    # An explicit context is kept; slots give way, and the plan says so.
    fixed = fit_model(info, Hardware(ram, ram, 8), gpu_offload=False, parallel=4,
                      context_length=4096)
    assert (fixed.context_length, fixed.parallel) == (4096, 2)
    assert "2 of 4 slots fit" in fixed.reason


def test_gemma_fits_four_slots_on_a_small_machine(gemma_path: Path) -> None:
    plan = fit_model(read_gguf(gemma_path), Hardware(4 * GIB, 4 * GIB, 2), gpu_offload=False,
                     parallel=4)
    assert (plan.context_length, plan.parallel) == (8192, 4)
