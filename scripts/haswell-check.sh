#!/usr/bin/env bash
# The engine tests on an AVX2-only CPU (Intel Haswell), emulated on any x86-64 machine:
# the `haswell` kind of scripts/cpu-check.sh, kept under its old name. Builds into
# .venv-haswell and runs `qemu-x86_64 -cpu Haswell` (children too). Arguments go on to
# pytest (default: tests/engine); JOBS, TIME_SCALE and EDGEDESK_VENV as there.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/cpu-check.sh haswell "$@"
