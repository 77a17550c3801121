"""The engine's one import of llama_cpp, made after telling its OpenMP runtime how to wait.

Every engine module takes llama_cpp and its parts from here (the import-linter contract
"Only desktop.engine._llama_cpp imports llama_cpp" holds it), so whichever engine module
a process imports first, the two things below happen before llama.cpp's library loads,
and a process that never loads it (the server's routes, the window, a test that only
needs the engine's types) is left alone.

**The spin count.** libgomp, llama.cpp's OpenMP runtime, reads ``GOMP_SPINCOUNT`` once,
when ``import llama_cpp`` loads it: this module sets it to ``OPENMP_SPIN_COUNT`` (3,000,
about 50 µs on Zen 4; libgomp's own default is 300,000, milliseconds) unless the
environment already sets ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY``.

Why not libgomp's default: between two decodes the decode loop runs Python (sampling,
handing tokens out); a libgomp worker that spins for milliseconds meanwhile takes a core
from it, and on a machine whose cores other processes also want, the loop then waits for
a time slice at every token (2-10x slower; with two busy processes beside it on 2 cores,
5-41 tokens/s against 43-48 at 3,000). Why not sleep at once (``OMP_WAIT_POLICY=PASSIVE``)
or after 100 spins (a few µs, the value set earlier on 2026-12-05): ggml synchronises
its threads at a barrier after every operation, and a thread that sleeps there must be
woken by a futex, tens of µs on a VM. A real-size model has thousands of operations per
token: on the Moonlight-16B-A3B shape (2 Zen 4 cores, nothing else running) a worker at
100 decoded 12.0 tokens/s, at 3,000 15.6, at 10,000 15.0-15.1, at 300,000 14.7-16.4;
llama-server 15.9-16.1 (issue 47, docs/benchmarks.md). 3,000 keeps nearly all of that
and stays stable on a busy machine.

libgomp cuts every spin to ``min(100, GOMP_SPINCOUNT)`` while it manages more threads
than the process may use cores, and it keeps a pool of threads for every thread that
has run a parallel region until that thread ends. So an engine computes on one thread
that lives on, its decode loop's; the load's warm-up decode and the vision projector's
encodes run on threads that end with them (``_native.on_a_passing_thread``). Two
models in one process (``engine.worker_process = false``) still keep two pools.
``OMP_WAIT_POLICY=PASSIVE`` chooses the busy machine; ``GOMP_SPINCOUNT=`` (empty)
libgomp's own default.

**The exit hook.** llama-cpp-python opens two ``/dev/null`` files when imported and
never closes them; ``_close_llama_cpp_null_files`` does, at exit.

``mtmd`` (llama.cpp's multimodal library) is loaded when first asked for, as
llama-cpp-python itself does: only the vision code needs it.
"""

from __future__ import annotations

import atexit
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING

OPENMP_SPIN_COUNT = "3000"  # spins before a waiting OpenMP thread sleeps (libgomp: 300000)


def _set_openmp_spin_count() -> None:
    """Put ``OPENMP_SPIN_COUNT`` in the environment unless the user chose how to wait."""
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = OPENMP_SPIN_COUNT


def _close_llama_cpp_null_files() -> None:
    """At exit: close the two ``/dev/null`` files llama-cpp-python opens when imported.

    ``llama_cpp._utils`` keeps them as module globals for its quiet model loads and never
    closes them, so every process that imported llama_cpp ended with "ResourceWarning:
    unclosed file <... name='/dev/null'>" (an error under the tests' warning filters).
    A model load racing the exit (a daemon thread) still finds usable files: both are
    swapped for a wrapper of one descriptor that no file object owns (the OS closes it).
    """
    utils = sys.modules.get("llama_cpp._utils")
    if utils is None:
        return
    spare: int | None = None
    for name in ("outnull_file", "errnull_file"):
        held = getattr(utils, name, None)
        if held is None or getattr(held, "closed", True):
            continue
        if spare is None:
            spare = os.open(os.devnull, os.O_WRONLY)
        setattr(utils, name, open(spare, "w", closefd=False))  # noqa: SIM115 - owns nothing
        held.close()


# Both before llama_cpp loads: libgomp reads the count once, then; the hook is registered
# first so it runs after any exit hook llama_cpp registers (last in, first out).
_set_openmp_spin_count()
atexit.register(_close_llama_cpp_null_files)

import llama_cpp  # noqa: E402 - after the spin count (see above)
from llama_cpp import _ctypes_extensions as ctypes_ext  # noqa: E402
from llama_cpp import llama_cpp as llama_lib  # noqa: E402
from llama_cpp._internals import LlamaModel  # noqa: E402
from llama_cpp._logger import logger as llama_cpp_logger  # noqa: E402
from llama_cpp._logger import set_verbose  # noqa: E402
from llama_cpp.llama_grammar import json_schema_to_gbnf  # noqa: E402

if TYPE_CHECKING:
    from llama_cpp import mtmd_cpp as mtmd

__all__ = [
    "OPENMP_SPIN_COUNT",
    "LlamaModel",
    "ctypes_ext",
    "json_schema_to_gbnf",
    "llama_cpp",
    "llama_cpp_logger",
    "llama_lib",
    "mtmd",
    "set_verbose",
]


def __getattr__(name: str) -> ModuleType:
    """``mtmd``: llama.cpp's multimodal library, loaded on first use (libmtmd)."""
    if name == "mtmd":
        from llama_cpp import mtmd_cpp

        return mtmd_cpp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
