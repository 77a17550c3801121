"""The only package that imports llama_cpp: load models, stream, embed, schedule.

Importing it asks llama.cpp's OpenMP runtime (libgomp, read once when it loads) to let
its threads sleep when they wait (``OMP_WAIT_POLICY=PASSIVE``) unless the environment
already says otherwise. Between two decodes the decode loop runs Python (sampling,
handing tokens out); a libgomp worker that spins meanwhile (its default: ~300k spins
before it sleeps) takes a core from it, and on a machine whose cores other processes
also want, the decode loop then waits for a time slice at every token. Gemma 3 270M on
2 shared cores, same runs (tokens/s, EdgeDesk with this / with libgomp's default /
llama-server): four busy processes beside it 27-32 / 14-15 / 17-19 (once 15 / 1.3 / 13),
six 21 / 7 / 12; the price is on an idle machine, 55-63 / 76-85 / 44-47, where every
wait inside a decode now sleeps instead of spinning (``tests/benchmarks/
bench_busy_machine.py``, docs/benchmarks.md). Set ``OMP_WAIT_POLICY=`` (empty: libgomp's
default) to choose speed on an idle machine. llama-server needs no such
setting: its loop between decodes is C++ and takes microseconds.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
