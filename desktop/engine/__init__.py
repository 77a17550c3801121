"""The only package that imports llama_cpp: load models, stream, embed, schedule.

Importing it tells llama.cpp's OpenMP runtime (libgomp, read once when it loads) to spin
only briefly before a waiting thread sleeps (``GOMP_SPINCOUNT=100``, a few µs; libgomp's
own default is 300,000), unless the environment already sets ``GOMP_SPINCOUNT`` or
``OMP_WAIT_POLICY``. Why: between two decodes the decode loop runs Python (sampling,
handing tokens out); a libgomp worker that spins its default count meanwhile takes a
core from it, and on a machine whose cores other processes also want the loop then
waits for a time slice at every token (2-10x slower). Sleeping at once
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
"""

import atexit
import os

OPENMP_SPIN_COUNT = "100"  # spins before a waiting OpenMP thread sleeps (libgomp: 300000)

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
    import sys

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


atexit.register(_close_llama_cpp_null_files)
