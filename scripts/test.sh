#!/usr/bin/env bash
# Install EdgeDesk with its test tools into .venv and run every check CI runs:
# lint, types, architecture contracts, then the whole test suite (with the real agent
# clients of tests/agents where npm can install them).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# llama.cpp is compiled for this CPU; leave AMX out where the CPU lists it but can't run it.
source scripts/amx-check.sh
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test,packaging]'
# Which CPU this run had: the tests that run prebuilt llama-server binaries skip or pass
# over them by what it can execute (tests/benchmarks/llama_server_peer.py).
if [ -r /proc/cpuinfo ]; then
  echo "== cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1);" \
    "$(grep -m1 '^flags' /proc/cpuinfo | grep -owE 'avx2|avx512f|avx512_vnni|amx_tile|amx_int8' | paste -sd' ' -)"
fi
# llama-server for this CPU (scripts/build-llama-server.sh) takes longer than CI allows
# (measured: docs/gpu.md), so only on request; without a runnable one its tests skip.
if [ "${EDGEDESK_BUILD_LLAMA_SERVER:-}" = 1 ]; then
  scripts/build-llama-server.sh
fi
export QT_QPA_PLATFORM=offscreen
echo "== commits";       PYTHON=.venv/bin/python ./scripts/check-commits.sh
echo "== ruff";          .venv/bin/ruff check desktop tests packaging
echo "== ruff format";   .venv/bin/ruff format --check desktop tests packaging scripts
echo "== mypy (strict)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
# The real Codex CLI and Claude Code for tests/agents (npm, cached; skipped without npm).
echo "== agent clients"; scripts/agent-clients.sh
echo "== pytest";        .venv/bin/python -m pytest "$@"
