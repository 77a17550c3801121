"""What importing the engine package sets up for llama.cpp's native runtime."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPENMP = ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")


def _libgomp_read(**environ: str) -> tuple[str, int]:
    """The wait policy and spin count llama.cpp's OpenMP runtime took when the engine was
    imported (libgomp prints what it read at start with ``OMP_DISPLAY_ENV=VERBOSE``),
    with ``environ`` in place of the test's own OpenMP settings."""
    base = {k: v for k, v in os.environ.items() if k not in OPENMP}
    done = subprocess.run(
        [sys.executable, "-c", "import desktop.engine.native"],
        cwd=ROOT,
        env={**base, **environ, "OMP_DISPLAY_ENV": "VERBOSE"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    said = done.stdout + done.stderr
    policy = re.search(r"OMP_WAIT_POLICY = '(\w+)'", said)
    spins = re.search(r"GOMP_SPINCOUNT = '(\d+)'", said)
    if policy is None or spins is None:
        pytest.skip("this llama.cpp build has no OpenMP runtime (libgomp) to ask")
    return policy.group(1), int(spins.group(1))


def test_openmp_threads_spin_only_briefly_before_they_sleep_by_default() -> None:
    # libgomp's own default is 300,000 spins (it prints PASSIVE for an unset policy too,
    # so the spin count is what tells our setting apart). 100 is what libgomp cuts any
    # count to while it runs more threads than cores, as an engine in the app's process
    # always did: a model's worker must spin no longer than that (issue 47).
    assert _libgomp_read()[1] == 100


def test_a_wait_policy_the_user_set_is_kept() -> None:
    assert _libgomp_read(OMP_WAIT_POLICY="PASSIVE") == ("PASSIVE", 0)
    assert _libgomp_read(OMP_WAIT_POLICY="ACTIVE")[0] == "ACTIVE"


def test_a_spin_count_the_user_set_is_kept() -> None:
    assert _libgomp_read(GOMP_SPINCOUNT="1000")[1] == 1000
    assert _libgomp_read(GOMP_SPINCOUNT="")[1] == 300000  # empty: libgomp's own default
