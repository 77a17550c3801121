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
export QT_QPA_PLATFORM=offscreen
echo "== commits";       PYTHON=.venv/bin/python ./scripts/check-commits.sh
echo "== ruff";          .venv/bin/ruff check desktop tests packaging
echo "== mypy (strict)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
# The real Codex CLI and Claude Code for tests/agents (npm, cached; skipped without npm).
echo "== agent clients"; scripts/agent-clients.sh
echo "== pytest";        .venv/bin/python -m pytest "$@"
