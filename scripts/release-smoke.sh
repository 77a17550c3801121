#!/usr/bin/env bash
# Smoke-test a built EdgeDesk artefact: it starts, carries the backend it was built for,
# and generates one token with a real model on this machine (on the GPU where the runner
# has one; a GPU build on a GPU-less runner must still run, on the CPU, and say so).
#
#   scripts/release-smoke.sh EXE VARIANT MODEL.gguf      VARIANT: cpu|cuda|vulkan|metal
set -euo pipefail
exe=$1 variant=$2 model=$3
py=$(command -v python3 || command -v python)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

version=$("$exe" --version)
echo "$version"
report=$(EDGEDESK_HOME="$home" "$exe" doctor --json)
compiled=$(printf '%s' "$report" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["backend"]["compiled_gpu"] or "cpu")')
if [ "$compiled" != "$variant" ]; then
  echo "release smoke: the $variant artefact carries the '$compiled' backend" >&2
  exit 1
fi
token=$(EDGEDESK_HOME="$home" "$exe" run "$model" "The capital of France is" --raw \
        --max-tokens 1 --temperature 0)
if [ -z "${token// /}" ]; then
  echo "release smoke: the $variant artefact generated nothing" >&2
  exit 1
fi
echo "release smoke: $variant artefact OK ($(printf '%s' "$version" | sed -n 's/^backend: //p')); one token: '$token'"
