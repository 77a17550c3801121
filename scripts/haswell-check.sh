#!/usr/bin/env bash
# The engine tests on an AVX2-only CPU (Intel Haswell), emulated on any x86-64 machine:
# builds llama-cpp-python for Haswell's instruction set (AVX2, FMA, F16C, BMI2; no
# -march=native, so no AVX-512 or AMX) into its own venv, then runs the tests under
# `qemu-x86_64 -cpu Haswell`, where any AVX-512 or AMX instruction is a SIGILL. Every
# process the tests start runs emulated too (model workers, the AMX probe, the CLI):
# the venv's python is a wrapper that starts qemu, and Python names that wrapper as
# sys.executable. llama.cpp rounds differently per instruction set, so this is where a
# test that compares generated text with `==` shows itself (docs/testing.md).
#
#   scripts/haswell-check.sh [PYTEST ARGS]   (default: the engine tests, tests/engine)
#
#   EDGEDESK_VENV   the venv to build into (default .venv-haswell; git-ignored)
#   JOBS            parallel compile jobs (default 2)
#   TIME_SCALE      how much longer a test may wait before it calls a state missing
#                   (default 30: EDGEDESK_TEST_TIME_SCALE, and pytest's per-test limit)
#
# Slow (the build about 5 minutes on 2 cores; emulation runs the tests 10-50 times
# slower), so neither CI nor ./scripts/test.sh runs it. Needs qemu-user (Debian/Ubuntu:
# apt install qemu-user). docs/testing.md records what it measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export EDGEDESK_VENV=${EDGEDESK_VENV:-.venv-haswell}
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2}
say() { printf 'haswell-check: %s\n' "$*"; }

command -v qemu-x86_64 >/dev/null || { say "needs qemu-x86_64 (apt install qemu-user)"; exit 2; }
[ "$(uname -m)" = x86_64 ] || { say "runs on x86-64 machines only"; exit 2; }

# Haswell's instruction set, named: GGML_NATIVE=OFF alone would build for SSE only.
EDGEDESK_GPU=cpu EDGEDESK_EXTRAS=test \
  EDGEDESK_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" \
  ./scripts/install.sh

# Haswell less the system features qemu's emulator lacks (each would print a warning on
# every process start, into the output the tests read); none of them is an instruction
# llama.cpp or Python uses.
CPU=Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm
venv=$(cd "$EDGEDESK_VENV" && pwd -P)
real=$(readlink -f "$venv/bin/python")
wrapper="$venv/bin/python-haswell"
# qemu's -0 sets the program's argv[0]: Python takes the wrapper for sys.executable, finds
# the venv's pyvenv.cfg beside it, and starts its children through the wrapper as well.
cat >"$wrapper" <<SH
#!/bin/sh
exec qemu-x86_64 -cpu $CPU -0 "\$0" "$real" "\$@"
SH
chmod +x "$wrapper"

said=$("$wrapper" -c 'import sys; print(sys.executable)' 2>/dev/null)
[ "$said" = "$wrapper" ] || { say "the emulated Python names $said, not the wrapper"; exit 1; }
"$wrapper" -c 'from desktop.engine.hardware.cpu_features import cpu_features; import sys
f = cpu_features(); b = [k for k, v in f.built.items() if v]
print("haswell-check: llama.cpp built for", ", ".join(b)); sys.exit(1 if {"AVX512", "AMX_INT8"} & set(b) else 0)' \
  2>/dev/null || { say "this llama.cpp build uses AVX-512 or AMX: not a Haswell build"; exit 1; }

# Emulation is slow, not wrong: a wait that bounds a failure grows with it (tests/conftest.py).
scale=${TIME_SCALE:-30}
started=$(date +%s)
say "running the tests under qemu-x86_64 -cpu Haswell (waits x$scale), started $(date -u +%FT%TZ)"
rc=0
EDGEDESK_TEST_TIME_SCALE=$scale QT_QPA_PLATFORM=offscreen "$wrapper" -m pytest -p no:cacheprovider \
  -o timeout=$((300 * scale)) "${@:-tests/engine}" || rc=$?
say "took $(( ($(date +%s) - started) / 60 )) min; pytest exit $rc"
exit "$rc"
