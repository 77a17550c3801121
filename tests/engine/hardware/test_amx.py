"""desktop/engine/_hardware/amx.py: the one AMX probe (installer, build scripts, doctor).

This machine has no AMX; what is tested here is the decision and the child's outcomes,
and that a tile instruction really faults where tiles cannot run (the probe is only as
good as the instruction it runs: TILERELEASE alone ran on a VM where AMX faulted).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.engine._hardware import amx

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[3]
LISTS_AMX = "processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile amx_int8\n"
NO_AMX = "processor\t: 0\nflags\t\t: fpu avx2 avx512f\n"


def test_tiles_are_tried_only_where_the_cpu_lists_them() -> None:
    tried: list[bool] = []

    def run() -> tuple[bool | None, str]:
        tried.append(True)
        return False, "a tile instruction faulted (SIGILL)"

    assert amx.verdict(NO_AMX, run) == ("absent", "the CPU does not list amx_tile")
    assert tried == []
    assert amx.verdict(LISTS_AMX, run) == (
        "listed, not usable",
        "a tile instruction faulted (SIGILL)",
    )
    assert amx.verdict(LISTS_AMX, lambda: (True, "ran"))[0] == "usable"
    assert amx.verdict(LISTS_AMX, lambda: (None, "no Python"))[0] == "listed, not checked"


def test_the_childs_end_says_what_happened() -> None:
    assert amx.outcome(0) == (True, "LDTILECFG, TILEZERO, TDPBSSD, TILESTORED, TILERELEASE ran")
    assert amx.outcome(-signal.SIGILL) == (False, "a tile instruction faulted (SIGILL)")
    assert amx.outcome(-signal.SIGSEGV)[0] is False
    assert amx.outcome(3)[0] is False  # Linux refused the tile state
    assert amx.outcome(4)[0] is False  # ran, but the stored tile was wrong
    assert amx.outcome(5)[0] is None  # no executable memory: not tried
    assert amx.outcome(1)[0] is None  # the child broke some other way: not tried


@pytest.mark.skipif(
    sys.platform != "linux" or "amx_tile" in Path("/proc/cpuinfo").read_text(),
    reason="needs Linux on a CPU without AMX",
)
def test_on_a_cpu_without_amx_the_tile_code_faults_and_linux_refuses_its_state() -> None:
    code = "from desktop.engine._hardware.amx import run_tiles; raise SystemExit(run_tiles(ask_linux={}))"
    unasked = subprocess.run(
        [sys.executable, "-c", code.format(False)], cwd=ROOT, timeout=60, check=False
    )
    assert amx.outcome(unasked.returncode) == (False, "a tile instruction faulted (SIGILL)")
    assert amx.probe() == (False, "Linux refused the tile state (ARCH_REQ_XCOMP_PERM)")


def test_run_by_its_path_with_a_bare_python_it_prints_the_verdict() -> None:
    # How scripts/amx-check.sh runs it, before any package is installed: -I keeps the
    # system Python's own modules (desktop/engine/_types.py must not shadow the stdlib).
    done = subprocess.run(
        [sys.executable, "-I", str(ROOT / "desktop" / "engine" / "_hardware" / "amx.py"), "--why"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == list(amx.verdict())
