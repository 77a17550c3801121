"""What importing the engine sets up: nothing for its face, llama.cpp's runtime with llama_cpp.

``import desktop.engine`` (the face) loads no inner module, no llama_cpp, no numpy and
changes no environment variable; the OpenMP spin count is set by the one module that
imports llama_cpp (``desktop/engine/_llama_cpp.py``), right before it does."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import desktop.engine

ROOT = Path(__file__).resolve().parents[2]
OPENMP = ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")


def _libgomp_read(**environ: str) -> tuple[str, int]:
    """The wait policy and spin count llama.cpp's OpenMP runtime took when an engine module
    that uses llama.cpp was imported (libgomp prints what it read at start with ``OMP_DISPLAY_ENV=VERBOSE``),
    with ``environ`` in place of the test's own OpenMP settings."""
    base = {k: v for k, v in os.environ.items() if k not in OPENMP}
    done = subprocess.run(
        [sys.executable, "-c", "import desktop.engine._native"],
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
    # so the spin count is what tells our setting apart): milliseconds, which on a busy
    # machine cost the decode loop a time slice per token. 3,000 (tens of µs) covers the
    # waits at ggml's barriers inside a decode, which at 100 slept and cost a real-size
    # MoE model a quarter of its speed (issue 47).
    assert _libgomp_read()[1] == 3000


def test_a_wait_policy_the_user_set_is_kept() -> None:
    assert _libgomp_read(OMP_WAIT_POLICY="PASSIVE") == ("PASSIVE", 0)
    assert _libgomp_read(OMP_WAIT_POLICY="ACTIVE")[0] == "ACTIVE"


def test_a_spin_count_the_user_set_is_kept() -> None:
    assert _libgomp_read(GOMP_SPINCOUNT="1000")[1] == 1000
    assert _libgomp_read(GOMP_SPINCOUNT="")[1] == 300000  # empty: libgomp's own default


def test_importing_the_face_loads_no_inner_module_nor_llama_cpp_nor_numpy() -> None:
    # A fresh process: this one has long imported the engine's insides.
    probe = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        "import desktop.engine\n"
        "print(sorted(m for m in sys.modules if m.startswith(('desktop.engine.', 'llama_cpp',"
        " 'numpy'))))\n"
        "print(dict(os.environ) == before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in OPENMP},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded, environ_unchanged = done.stdout.splitlines()
    assert loaded == "[]"
    assert environ_unchanged == "True"  # the spin count waits for llama_cpp's import


def test_every_name_of_the_face_resolves() -> None:
    missing = [n for n in desktop.engine.__all__ if not hasattr(desktop.engine, n)]
    assert missing == []
    assert desktop.engine.worker_main.__module__ == "desktop.engine._worker.child"
    assert not hasattr(desktop.engine, "Chunk")  # the streamed delta is ``Delta`` (issue 51)


def test_the_face_lists_what_code_outside_the_engine_imports_from_it() -> None:
    # __all__ is the contract: every name imported from desktop.engine in desktop/
    # (outside the engine) is in it, and nothing in it is unused there.
    used = set()
    for path in (ROOT / "desktop").rglob("*.py"):
        if path.is_relative_to(ROOT / "desktop" / "engine"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "desktop.engine":
                used |= {alias.name for alias in node.names}
    assert used == set(desktop.engine.__all__)
