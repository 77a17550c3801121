"""The window's hardware report says llama.cpp's CPU features against this CPU's too."""

from __future__ import annotations

import pytest

from desktop.engine._hardware.cpu_features import as_report, cpu_features
from desktop.machine._doctor import _cpu_lines
from desktop.ui.settings.hardware_report import cpu_lines

pytestmark = pytest.mark.qt

AVX512_BUILD = "CPU : AVX = 1 | AVX2 = 1 | FMA = 1 | AVX512 = 1 | "
AVX2_CPU = "flags\t\t: avx avx2 fma\n"


def _report() -> dict[str, object]:
    return dict(as_report(cpu_features(AVX512_BUILD, AVX2_CPU)))


def test_in_english_the_window_says_what_doctor_prints(qapp) -> None:
    assert cpu_lines(_report()) == _cpu_lines(_report())


def test_in_chinese_the_sigill_warning_keeps_the_features_and_the_fix(chinese) -> None:
    built, have, warning = cpu_lines(_report())
    assert "AVX, AVX2, FMA, AVX512" in built and "llama.cpp" in built
    assert "AVX, AVX2, FMA" in have and "无" in have  # AMX: absent
    assert "AVX512" in warning and "SIGILL" in warning and "./scripts/install.sh" in warning
    assert "cannot run" not in warning and "this CPU" not in have


SAPPHIRE = "flags\t\t: avx avx2 fma avx512f amx_tile amx_int8 amx_bf16\n"


def _amx_report() -> dict[str, object]:
    ran = cpu_features(AVX512_BUILD, SAPPHIRE, probe=lambda: (True, "LDTILECFG … ran"))
    return dict(as_report(ran))


def test_where_tiles_run_the_window_says_the_kernels_are_left_out_as_doctor_does(qapp) -> None:
    lines = cpu_lines(_amx_report())
    assert lines == _cpu_lines(_amx_report())
    assert lines[-2:] == [
        "           AMX probe: LDTILECFG … ran",
        "           llama.cpp's AMX kernels left out: they crash on this llama.cpp "
        "(EDGEDESK_AMX=1 ./scripts/install.sh builds them)",
    ]


def test_in_chinese_the_left_out_kernels_keep_the_switch_that_builds_them(chinese) -> None:
    probe, left_out = cpu_lines(_amx_report())[-2:]
    assert "AMX" in probe and "LDTILECFG … ran" in probe
    assert "EDGEDESK_AMX=1 ./scripts/install.sh" in left_out and "AMX" in left_out
    assert "left out" not in left_out
