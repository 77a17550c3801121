"""The engine's one import of llama_cpp, made after telling its OpenMP runtime how to wait.

Every engine module takes llama_cpp and its parts from here (the import-linter contract
"Only desktop.engine._llama_cpp imports llama_cpp" holds it), so whichever engine module
a process imports first, the two things below happen before llama.cpp's library loads,
and a process that never loads it (the server's routes, the window, a test that only
needs the engine's types) is left alone.

**The spin count.** libgomp, llama.cpp's OpenMP runtime, reads ``GOMP_SPINCOUNT`` once,
when ``import llama_cpp`` loads it: this module sets it to ``OPENMP_SPIN_COUNT`` (100, a
few µs; libgomp's own default is 300,000) unless the environment already sets
``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY``. Why: between two decodes the decode loop runs
Python (sampling, handing tokens out); a libgomp worker that spins its default count
meanwhile takes a core from it, and on a machine whose cores other processes also want
the loop then waits for a time slice at every token (2-10x slower). Sleeping at once
(``OMP_WAIT_POLICY=PASSIVE``) avoids that but makes every barrier inside a decode sleep
too: a quarter to a third slower on an idle machine.

Why 100 and not the 3,000 chosen first: libgomp cuts every spin to
``min(100, GOMP_SPINCOUNT)`` while it manages more threads than the process may use
cores, as an engine in the app's own process does (there the setting changed nothing:
the model loads on one thread and decodes on another, each with its pool, is our
reading), so the figures measured in-process were at 100. A model's worker process
has one pool, so 3,000 spins (tens of µs a wait) held: 44% of its CPU time went to
spinning at ggml's barriers, twice the CPU per token of the same engine in-process on
the Moonlight-16B-A3B shape and about half its speed on a busy machine (issue 47,
docs/benchmarks.md). 100 makes both the same, whatever libgomp decides.
``OMP_WAIT_POLICY=PASSIVE`` chooses the busy machine; ``GOMP_SPINCOUNT=`` (empty)
libgomp's own default. llama-server needs no such setting: its loop between
decodes is C++ and takes microseconds.

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

OPENMP_SPIN_COUNT = "100"  # spins before a waiting OpenMP thread sleeps (libgomp: 300000)


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
