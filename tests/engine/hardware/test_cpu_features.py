"""llama.cpp's compiled CPU features against the machine's: what would die with SIGILL."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from desktop.engine._hardware import amx
from desktop.engine._hardware.cpu_features import (
    as_report,
    built_features,
    cpu_features,
    machine_flags,
)
from desktop.machine import format_report

pytestmark = pytest.mark.fast

AVX512_BUILD = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | "
    "FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | "
    "AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
AVX2_BUILD = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | "
EPYC_AVX2 = "processor\t: 0\nflags\t\t: fpu sse3 avx avx2 fma f16c\n"
EPYC_AVX512 = (
    "processor\t: 0\nflags\t\t: fpu avx avx2 fma f16c avx_vnni avx512f avx512vbmi "
    "avx512_vnni avx512_bf16\n"
)
SAPPHIRE_VM = EPYC_AVX512.rstrip("\n") + " amx_tile amx_int8 amx_bf16\n"


def test_the_compiled_side_is_read_from_llama_cpps_system_info() -> None:
    built = built_features(AVX512_BUILD)
    assert built["AVX2"] and built["AVX512"] and built["AVX512_VNNI"] and built["AMX_INT8"]
    assert not built_features(AVX2_BUILD)["AVX512"]
    assert machine_flags(EPYC_AVX2) == {"fpu", "sse3", "avx", "avx2", "fma", "f16c"}


def test_an_avx512_build_on_an_avx2_only_cpu_names_what_it_lacks() -> None:
    features = cpu_features(AVX512_BUILD, EPYC_AVX2, probe=lambda: (True, "ran"))
    assert features.amx == "absent"
    assert features.missing == [
        "AVX_VNNI",
        "AVX512",
        "AVX512_VBMI",
        "AVX512_VNNI",
        "AVX512_BF16",
        "AMX_INT8",
    ]
    assert cpu_features(AVX2_BUILD, EPYC_AVX2).missing == []


def test_amx_listed_but_unusable_is_told_apart_from_usable() -> None:
    unusable = cpu_features(AVX512_BUILD, SAPPHIRE_VM, probe=lambda: (False, "faulted"))
    assert unusable.amx == "listed, not usable" and unusable.missing == ["AMX_INT8"]
    assert as_report(unusable)["amx_probe"] == "faulted"
    usable = cpu_features(AVX512_BUILD, SAPPHIRE_VM, probe=lambda: (True, "ran"))
    assert usable.amx == "usable" and usable.missing == []
    unknown = cpu_features(AVX512_BUILD, SAPPHIRE_VM, probe=lambda: (None, "no Python"))
    assert unknown.amx == "listed, not checked" and unknown.missing == ["AMX_INT8"]
    probed: list[bool] = []
    cpu_features(AVX512_BUILD, EPYC_AVX512, probe=lambda: (probed.append(True), (True, ""))[1])
    assert probed == []  # no amx_tile flag: nothing to try


def test_doctor_runs_the_one_amx_probe_the_scripts_run() -> None:
    # scripts/amx-check.sh runs desktop/engine/_hardware/amx.py by its path (tests/scripts/test_install_script.py);
    # doctor's default probe is that module's, and on a CPU that lists AMX it really runs
    # the tile instructions: here (no AMX) Linux refuses the tile state, as it must.
    assert inspect.signature(cpu_features).parameters["probe"].default is amx.probe
    listed_here = cpu_features(AVX512_BUILD, SAPPHIRE_VM)
    if "amx_tile" not in Path("/proc/cpuinfo").read_text():
        assert listed_here.amx == "listed, not usable", listed_here
        assert listed_here.amx_probe == "Linux refused the tile state (ARCH_REQ_XCOMP_PERM)"


def test_doctor_prints_both_sides_and_warns_of_sigill() -> None:
    report = {
        "version": "1",
        "hardware": "RAM",
        "gpu_used": False,
        "why_not_gpu": "",
        "models": [],
        "devices": [],
        "backend": {"describe": "cpu", "compiled": ["CPU"]},
        "cpu": dict(as_report(cpu_features(AVX512_BUILD, EPYC_AVX2))),
    }
    text = "\n".join(format_report(report))
    assert "llama.cpp built for AVX, AVX2, FMA, F16C, AVX_VNNI, AVX512" in text
    assert "this CPU has AVX, AVX2, FMA, F16C; AMX: absent" in text
    assert "which this CPU cannot run: it would stop with SIGILL" in text


def test_this_machine_runs_what_this_llama_cpp_was_built_for() -> None:
    # The installed llama-cpp-python is built on this machine (-march=native): nothing
    # it was compiled for may be missing here, or every decode would die.
    features = cpu_features()
    assert features.missing == []
    if "avx2" in Path("/proc/cpuinfo").read_text():
        assert features.machine["AVX2"]


def test_the_report_says_whether_llama_cpps_amx_kernels_are_in_where_tiles_run() -> None:
    ran = lambda: (True, "ran")  # noqa: E731 - the probe's answer
    left_out = cpu_features("CPU : AVX512 = 1 | AMX_INT8 = 0 | ", SAPPHIRE_VM, ran)
    built_in = cpu_features("CPU : AVX512 = 1 | AMX_INT8 = 1 | ", SAPPHIRE_VM, ran)
    faulting = cpu_features("CPU : AVX512 = 1 | ", SAPPHIRE_VM, lambda: (False, "SIGILL"))
    assert as_report(left_out)["amx_kernels"] == "left out"
    assert as_report(built_in)["amx_kernels"] == "built in"
    assert as_report(faulting)["amx_kernels"] == ""  # no tiles: nothing to say of kernels
