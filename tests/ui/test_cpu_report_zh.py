"""The window's hardware report says llama.cpp's CPU features against this CPU's too."""

from __future__ import annotations

import pytest

from desktop.engine.hardware.cpu_features import as_report, cpu_features
from desktop.machine.doctor import _cpu_lines
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
