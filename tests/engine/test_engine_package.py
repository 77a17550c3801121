"""What importing the engine package sets up for llama.cpp's native runtime."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOW = "import os, desktop.engine.native, llama_cpp; print(os.environ.get('OMP_WAIT_POLICY'))"


def _policy_seen(environ: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_idle_openmp_workers_sleep_between_decodes_by_default() -> None:
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _policy_seen(environ) == "PASSIVE"


def test_a_policy_the_user_set_is_kept() -> None:
    assert _policy_seen({**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
