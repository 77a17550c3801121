"""What importing the engine package sets up for llama.cpp's native runtime."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _policy_libgomp_read(environ: dict[str, str]) -> str:
    """The wait policy llama.cpp's OpenMP runtime took when the engine was imported
    (libgomp prints what it read at start when ``OMP_DISPLAY_ENV`` is set)."""
    done = subprocess.run(
        [sys.executable, "-c", "import desktop.engine.native"],
        cwd=ROOT,
        env={**environ, "OMP_DISPLAY_ENV": "TRUE"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = re.search(r"OMP_WAIT_POLICY = '(\w+)'", done.stdout + done.stderr)
    if found is None:
        pytest.skip("this llama.cpp build has no OpenMP runtime (libgomp) to ask")
    return found.group(1)


def test_openmp_threads_sleep_when_they_wait_by_default() -> None:
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _policy_libgomp_read(environ) == "PASSIVE"


def test_a_policy_the_user_set_is_kept() -> None:
    assert _policy_libgomp_read({**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
