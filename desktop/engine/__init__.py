"""The only package that imports llama_cpp: load models, stream, embed, schedule.

Importing it asks llama.cpp's OpenMP runtime (libgomp, read once when it loads) to let
its threads sleep when they wait (``OMP_WAIT_POLICY=PASSIVE``) unless the environment
already says otherwise. Between two decodes the decode loop runs Python (sampling,
handing tokens out); a libgomp worker that spins meanwhile (its default: ~300k spins
before it sleeps) takes a core from it, and on a machine whose cores other processes
also want, the decode loop then waits for a time slice at every token. Gemma 3 270M on
2 shared cores with four busy processes beside it, same run: 1.3 tokens/s with libgomp's
default, 15.1 with this, llama-server 13.1 (``tests/benchmarks/bench_busy_machine.py``,
figures in docs/benchmarks.md). llama-server needs no such setting: its loop between
decodes is C++ and takes microseconds.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
