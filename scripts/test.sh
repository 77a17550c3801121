#!/usr/bin/env bash
# Install EdgeDesk with its test tools into .venv and run every check CI runs:
# lint, types, architecture contracts, then the whole test suite (with the real agent
# clients of tests/agents where npm can install them). Arguments go on to pytest.
# --fast (first argument): a developer's check between edits: the same lint, types and
# contracts, then only the fast subset (pytest -m fast, tests/fast.py); it installs only
# into a .venv that has no edgedesk yet and skips the agent clients (no fast test uses
# them). CI (.ci/run) runs it without --fast.
set -euo pipefail
cd "$(dirname "$0")/.."
FAST=0
if [ "${1:-}" = "--fast" ]; then
  FAST=1
  shift
fi
PYTHON=${PYTHON:-python3}
if [ "$FAST" = 0 ] || [ ! -x .venv/bin/edgedesk ]; then
  # The installer's own route (scripts/install.sh): llama.cpp compiled for this CPU, with
  # the AMX decision of scripts/amx-check.sh, from a wheel cache keyed by both. pip's own
  # cache is keyed by neither and would hand back a wheel built for another CPU or with
  # other flags.
  EDGEDESK_VENV=.venv EDGEDESK_GPU=${EDGEDESK_GPU:-cpu} EDGEDESK_EXTRAS=test,packaging \
    PYTHON="$PYTHON" ./scripts/install.sh
fi
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
if [ "$FAST" = 1 ]; then
  echo "== pytest -m fast"; .venv/bin/python -m pytest -m fast "$@"
  exit
fi
# The real Codex CLI and Claude Code for tests/agents (npm, cached; skipped without npm).
echo "== agent clients"; scripts/agent-clients.sh
echo "== pytest";        .venv/bin/python -m pytest "$@"
