#!/usr/bin/env bash
# Install EdgeDesk with its test tools into .venv and run every check CI runs:
# lint, types, architecture contracts, then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# llama-cpp-python compiles llama.cpp for this CPU (-march=native). Some virtual machines
# advertise Intel AMX yet fault on its instructions (SIGILL in the first matrix multiply),
# so test builds leave AMX out; GCC honours an explicit -mno-* whatever -march says.
if [ "$(uname -m)" = x86_64 ] && grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then
  NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CFLAGS="${CFLAGS:-} $NO_AMX" CXXFLAGS="${CXXFLAGS:-} $NO_AMX"
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test,packaging]'
export QT_QPA_PLATFORM=offscreen
echo "== ruff";          .venv/bin/ruff check desktop tests packaging
echo "== mypy (strict)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
echo "== pytest";        .venv/bin/python -m pytest "$@"
