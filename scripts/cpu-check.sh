#!/usr/bin/env bash
# The tests on a kind of CPU this machine is not: llama-cpp-python built for that kind's
# instruction set (GGML_NATIVE=OFF and the kind's GGML_* switches) into its own venv, then
# the tests (default: tests/engine) run with it, emulated where the kind lacks something
# this CPU has. llama.cpp rounds differently per instruction set, so this is where a test
# that compares generated text with `==` shows itself (docs/testing.md, "Every CPU").
#
#   scripts/cpu-check.sh KIND [PYTEST ARGS]
#
#   haswell        AVX2, FMA, F16C, BMI2; no AVX-512, no AMX. Run under
#                  `qemu-x86_64 -cpu Haswell`, where any AVX-512 or AMX instruction is a
#                  SIGILL, children included. Any x86-64 machine; needs qemu-user.
#   avx512-novnni  AVX-512 F/CD/BW/DQ/VL without VNNI, VBMI or BF16 (Intel Skylake-SP
#                  and Cascade Lake without its VNNI path): llama.cpp's AVX-512 kernels
#                  that such a CPU runs. Run natively, so it needs an AVX-512 CPU; QEMU's
#                  emulator has no AVX-512, so nothing here can catch a VNNI instruction
#                  slipping in. The compiler emits none without -mavx512vnni.
#
#   EDGEDESK_VENV   the venv to build into (default .venv-KIND; git-ignored)
#   JOBS            parallel compile jobs (default 2)
#   TIME_SCALE      how much longer a test may wait before it calls a state missing
#                   (EDGEDESK_TEST_TIME_SCALE, and pytest's per-test limit; default 30
#                   when emulated, 1 when native)
#
# Slow (a build of about 5-11 minutes on 2 cores; emulation runs the tests 10-50 times
# slower), so neither CI nor ./scripts/test.sh runs it. docs/testing.md records what it
# measured on each kind.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'cpu-check: %s\n' "$*"; }
KIND=${1:-}
[ $# -gt 0 ] && shift
[ "$(uname -m)" = x86_64 ] || { say "runs on x86-64 machines only"; exit 2; }
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { grep -qw "$1" <<<"$flags"; }

BASE="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
case "$KIND" in
  haswell)
    command -v qemu-x86_64 >/dev/null || { say "needs qemu-x86_64 (apt install qemu-user)"; exit 2; }
    CMAKE=$BASE
    FORBIDDEN="AVX512 AMX_INT8"
    # Haswell less the system features qemu's emulator lacks (each would print a warning
    # on every process start, into the output the tests read); none of them is an
    # instruction llama.cpp or Python uses.
    EMULATE=Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm
    scale=${TIME_SCALE:-30}
    ;;
  avx512-novnni)
    has avx512f && has avx512bw && has avx512vl && has avx512dq \
      || { say "needs a CPU with AVX-512 F/BW/VL/DQ to run natively"; exit 2; }
    CMAKE="$BASE -DGGML_AVX512=ON -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF"
    FORBIDDEN="AVX512_VNNI AVX512_VBMI AVX512_BF16 AVX_VNNI AMX_INT8"
    EMULATE=
    scale=${TIME_SCALE:-1}
    ;;
  *)
    say "usage: scripts/cpu-check.sh haswell|avx512-novnni [PYTEST ARGS]"
    exit 2
    ;;
esac
export EDGEDESK_VENV=${EDGEDESK_VENV:-.venv-$KIND}
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2}
EDGEDESK_GPU=cpu EDGEDESK_EXTRAS=test EDGEDESK_CMAKE_ARGS="$CMAKE" ./scripts/install.sh

venv=$(cd "$EDGEDESK_VENV" && pwd -P)
python="$venv/bin/python"
if [ -n "$EMULATE" ]; then
  real=$(readlink -f "$venv/bin/python")
  python="$venv/bin/python-$KIND"
  # qemu's -0 sets the program's argv[0]: Python takes the wrapper for sys.executable,
  # finds the venv's pyvenv.cfg beside it, and starts its children through it as well.
  cat >"$python" <<SH
#!/bin/sh
exec qemu-x86_64 -cpu $EMULATE -0 "\$0" "$real" "\$@"
SH
  chmod +x "$python"
  said=$("$python" -c 'import sys; print(sys.executable)' 2>/dev/null)
  [ "$said" = "$python" ] || { say "the emulated Python names $said, not the wrapper"; exit 1; }
fi

# The build must be the kind's: a feature the kind lacks compiled in means a wrong build.
FORBIDDEN=$FORBIDDEN "$python" -c 'import os, sys
from desktop.engine import cpu_features
built = [k for k, v in cpu_features().built.items() if v]
print("cpu-check: llama.cpp built for", ", ".join(built))
sys.exit(1 if set(os.environ["FORBIDDEN"].split()) & set(built) else 0)' \
  2>/dev/null || { say "this llama.cpp build uses an instruction set $KIND lacks"; exit 1; }

# A slow run is not a wrong one: a wait that bounds a failure grows with it (tests/conftest.py).
started=$(date +%s)
say "running the tests for $KIND${EMULATE:+ under qemu-x86_64 -cpu ${EMULATE%%,*}} (waits x$scale), started $(date -u +%FT%TZ)"
rc=0
EDGEDESK_TEST_TIME_SCALE=$scale QT_QPA_PLATFORM=offscreen "$python" -m pytest -p no:cacheprovider \
  -o timeout=$((300 * scale)) "${@:-tests/engine}" || rc=$?
say "took $(( ($(date +%s) - started) / 60 )) min; pytest exit $rc"
exit "$rc"
