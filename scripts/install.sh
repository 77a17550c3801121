#!/usr/bin/env bash
# Install EdgeDesk into .venv with llama-cpp-python built for this machine's GPU.
#
# Detects an NVIDIA GPU (nvidia-smi), a Vulkan GPU (vulkaninfo / Vulkan ICDs: AMD, Intel,
# NVIDIA) or Apple Silicon (Metal), builds llama-cpp-python for it, and says what it chose
# and why. A GPU build that fails falls back to the CPU build with the reason: never a
# broken install. Built wheels are cached, so a rerun takes seconds.
#
#   EDGEDESK_GPU=cuda|vulkan|metal|cpu   override the detection
#   EDGEDESK_VENV=DIR                    the virtual environment (default .venv)
#   EDGEDESK_EXTRAS=test                 extras to install with EdgeDesk (e.g. test)
#   EDGEDESK_WHEEL_CACHE=DIR             built wheels (default ~/.cache/edgedesk/gpu-wheels)
#   VULKAN_INCLUDE_DIR=DIR               Vulkan headers newer than the system's (docs/gpu.md)
#   CUDA_HOME=DIR                        a CUDA toolkit outside PATH and /usr/local/cuda
#   CMAKE_CUDA_ARCHITECTURES=90          the CUDA compute capabilities to build for
#                                        (default: those nvidia-smi reports)
#   EDGEDESK_CMAKE_ARGS="-D..."          more llama.cpp build flags, e.g. -DGGML_NATIVE=OFF
#
#   ./scripts/install.sh --dry-run       print the choice and the build flags; change nothing
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${EDGEDESK_VENV:-.venv}
EXTRAS=${EDGEDESK_EXTRAS:-}
CACHE=${EDGEDESK_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgedesk/gpu-wheels}
# llama.cpp is compiled for this CPU; leave AMX out where the CPU lists it but can't run it.
source scripts/amx-check.sh
LLAMA_VERSION=$(sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -n 1)

say() { printf 'edgedesk install: %s\n' "$*"; }

nvidia_query() {  # "name, compute_cap" per GPU, or nothing
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null || true
}

vulkan_gpu() {  # the first hardware Vulkan GPU's name, or nothing
  if command -v vulkaninfo >/dev/null 2>&1; then
    vulkaninfo --summary 2>/dev/null | awk -F'= ' '
      /deviceType/ { hw = ($2 ~ /DISCRETE_GPU|INTEGRATED_GPU/) }
      /deviceName/ && hw { print $2; exit }'
    return 0
  fi
  # No vulkaninfo: a vendor ICD (not the lvp/llvmpipe software one) means a driver is there.
  local icd
  for icd in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json; do
    [ -e "$icd" ] || continue
    case "$(basename "$icd")" in lvp_*|*lavapipe*|*swiftshader*) continue ;; esac
    echo "Vulkan driver $(basename "$icd" .json)"
    return 0
  done
}

choose_gpu() {  # sets GPU and WHY
  if [ -n "${EDGEDESK_GPU:-}" ]; then
    case "$EDGEDESK_GPU" in
      cuda|vulkan|metal|cpu) GPU=$EDGEDESK_GPU; WHY="EDGEDESK_GPU=$EDGEDESK_GPU" ;;
      *) say "EDGEDESK_GPU=$EDGEDESK_GPU is not one of cuda, vulkan, metal, cpu"; exit 2 ;;
    esac
    return
  fi
  if [ "$(uname -s)" = Darwin ] && [ "$(uname -m)" = arm64 ]; then
    GPU=metal; WHY="Apple Silicon: Metal"; return
  fi
  local nvidia vk
  nvidia=$(nvidia_query)
  if [ -n "$nvidia" ]; then
    GPU=cuda; WHY="NVIDIA GPU found: $(echo "$nvidia" | head -n 1)"; return
  fi
  vk=$(vulkan_gpu)
  if [ -n "$vk" ]; then
    GPU=vulkan; WHY="Vulkan GPU found: $vk"; return
  fi
  GPU=cpu
  WHY="no NVIDIA GPU (nvidia-smi), no Vulkan GPU (vulkaninfo or a vendor ICD), not Apple Silicon"
}

# NVIDIA publishes nvcc on PyPI only from CUDA 13 on (nvidia-cuda-nvcc); the -cu12 package
# holds ptxas alone. The CUDA 13 packages share one folder, site-packages/nvidia/cu13, laid
# out as a toolkit (bin/nvcc, nvvm/bin/cicc, include, lib). The pins keep it one major.
CUDA_PYPI="nvidia-cuda-nvcc==13.* nvidia-cuda-crt==13.* nvidia-nvvm==13.* nvidia-cuda-runtime==13.* nvidia-cublas==13.* nvidia-cuda-cccl==13.*"
pypi_toolkit_dir() {  # where the PyPI toolkit goes: absolute, whatever EDGEDESK_VENV is
  # CMake takes a relative CMAKE_CUDA_COMPILER for a program name to look up on PATH, so
  # with the default EDGEDESK_VENV=.venv every PyPI-toolkit build failed to configure.
  printf '%s/%s/cuda-toolkit\n' "$(cd "$(dirname "$VENV")" && pwd -P)" "$(basename "$VENV")"
}

cuda_toolkit_from_pypi() {  # NVIDIA's PyPI packages, copied as one toolkit folder
  local site root lib
  # shellcheck disable=SC2086  # one word per package
  "$VENV/bin/python" -m pip install --quiet $CUDA_PYPI >&2
  site=$("$VENV/bin/python" -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))')
  [ -x "$site/nvidia/cu13/bin/nvcc" ] || { say "no nvcc in $site/nvidia/cu13 after pip install" >&2; return 1; }
  root=$(pypi_toolkit_dir)  # a copy: a later pip upgrade does not move the wheel's libraries
  rm -rf "$root"; cp -r "$site/nvidia/cu13" "$root"
  for lib in "$root"/lib/lib*.so.*; do  # the linker wants the unversioned names
    [ -e "$lib" ] && ln -sf "$(basename "$lib")" "${lib%%.so.*}.so"
  done
  echo "$root"
}

link_cuda_runtime() {  # $1 the toolkit's lib folder: put its runtime beside the wheel's libraries
  # llama-cpp-python sets each library's run path to $ORIGIN alone (its own folder), and
  # the PyPI toolkit is on no loader path: without these links libggml-cuda.so finds no
  # libcublas.so.13 (or a system libcudart of another release) and llama_cpp cannot load.
  local dest lib
  dest=$("$VENV/bin/python" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("llama_cpp").origin).parent / "lib")')
  for lib in "$1"/libcudart.so.* "$1"/libcublas.so.* "$1"/libcublasLt.so.*; do
    [ -e "$lib" ] && ln -sf "$lib" "$dest/$(basename "$lib")"
  done
  return 0
}

cmake_args_for() {  # sets ARGS (CMAKE_ARGS) for $1; returns 1 with REASON set if it cannot build
  case "$1" in
    cpu) ARGS="" ;;
    metal) ARGS="-DGGML_METAL=on" ;;
    cuda)
      local nvcc="" root archs
      archs=${CMAKE_CUDA_ARCHITECTURES:-$(nvidia_query | awk -F', *' '{ gsub(/\./, "", $2); print $2 }' | sort -u | paste -sd';' -)}
      if [ -z "$archs" ]; then  # 'native' needs a GPU to look at: CMake fails without one
        REASON="no NVIDIA GPU found to build for; set CMAKE_CUDA_ARCHITECTURES to its compute capability (e.g. 89 for an RTX 40xx, 90 for an H100) to build without one"
        return 1
      fi
      if command -v nvcc >/dev/null 2>&1; then nvcc=$(command -v nvcc)
      elif [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
      else
        say "no CUDA toolkit on this machine: fetching nvcc and the runtime from PyPI"
        if [ -n "$DRY_RUN" ]; then
          root=$(pypi_toolkit_dir)
          ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$archs -DCMAKE_CUDA_COMPILER=$root/bin/nvcc -DCUDAToolkit_ROOT=$root -DGGML_CUDA_NO_VMM=on (toolkit from PyPI: $CUDA_PYPI)"; return 0
        fi
        root=$(cuda_toolkit_from_pypi) || { REASON="could not install the CUDA toolkit from PyPI"; return 1; }
        nvcc="$root/bin/nvcc"
        CUDA_RUNTIME_DIR="$root/lib"
        say "CUDA toolkit from PyPI: nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') in $root"
        # The PyPI packages have no libcuda.so stub to link against, so leave out llama.cpp's
        # virtual-memory pool, the one part that links the driver directly: the library then
        # loads without a driver too (and says "no CUDA device" instead of failing to import).
        ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$archs -DCMAKE_CUDA_COMPILER=$nvcc -DCUDAToolkit_ROOT=$root -DGGML_CUDA_NO_VMM=on"
        return 0
      fi
      ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$archs -DCMAKE_CUDA_COMPILER=$nvcc" ;;
    vulkan)
      if ! command -v glslc >/dev/null 2>&1; then
        REASON="the Vulkan build needs the shader compiler glslc and the Vulkan headers (Debian/Ubuntu: apt install glslc libvulkan-dev; else the LunarG Vulkan SDK)"
        return 1
      fi
      local hdr="${VULKAN_INCLUDE_DIR:-${VULKAN_SDK:+$VULKAN_SDK/include}}"
      hdr="${hdr:-/usr/include}/vulkan/vulkan_core.h"
      # llama.cpp's Vulkan backend uses VK_EXT_layer_settings (headers >= 1.3.2xx);
      # Debian bookworm and Ubuntu 22.04 ship older ones. Say so before a 6-minute build.
      if [ -f "$hdr" ] && ! grep -q VK_EXT_layer_settings "$hdr"; then
        REASON="the Vulkan headers in $hdr (version $(sed -n 's/^#define VK_HEADER_VERSION //p' "$hdr")) are too old for llama.cpp; point VULKAN_INCLUDE_DIR at newer ones (docs/gpu.md says how)"
        return 1
      fi
      ARGS="-DGGML_VULKAN=on${VULKAN_INCLUDE_DIR:+ -DVulkan_INCLUDE_DIR=$VULKAN_INCLUDE_DIR}" ;;
  esac
}

build_wheel() {  # $1 variant, $2 CMAKE_ARGS; sets WHEEL to the cached wheel's path
  local key dir log cpu
  # Every variant compiles llama.cpp's CPU code with -march=native: a wheel built on
  # another CPU (a moved disk, a cache shared between machines) must not be taken.
  cpu=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m)
  key=$(printf '%s|%s|%s|%s|%s|%s' "$LLAMA_VERSION" "$1" "$2" "${CFLAGS:-}" "$("$VENV/bin/python" -c 'import sys; print(sys.version_info[:2])')" "$cpu" \
        | sha256sum | cut -c1-12)
  dir="$CACHE/$1-$key"
  if ! compgen -G "$dir/llama_cpp_python-*.whl" >/dev/null; then
    log="$CACHE/$1-$key.log"
    mkdir -p "$CACHE"; rm -rf "$dir.tmp"
    say "building llama-cpp-python $LLAMA_VERSION for $1 (CMAKE_ARGS='$2'; log: $log); this takes minutes"
    if ! CMAKE_ARGS="$2" "$VENV/bin/python" -m pip wheel --no-deps --no-cache-dir \
         --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_VERSION" -w "$dir.tmp" >"$log" 2>&1; then
      REASON="the $1 build failed: $(grep -m1 -iE 'error' "$log" || tail -n 1 "$log") (full log: $log)"
      return 1
    fi
    mv "$dir.tmp" "$dir"
  else
    say "using the cached $1 build in $dir"
  fi
  for WHEEL in "$dir"/llama_cpp_python-*.whl; do break; done
}

install_variant() {  # $1 variant; returns 1 with REASON set on failure
  local got
  cmake_args_for "$1" || return 1
  ARGS="$ARGS${EDGEDESK_CMAKE_ARGS:+ $EDGEDESK_CMAKE_ARGS}"
  build_wheel "$1" "${ARGS# }" || return 1
  "$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps "$WHEEL"
  [ "$1" != cuda ] || [ -z "$CUDA_RUNTIME_DIR" ] || link_cuda_runtime "$CUDA_RUNTIME_DIR"
  "$VENV/bin/python" -m pip install --quiet -e ".${EXTRAS:+[$EXTRAS]}"
  # Proof that the built library loads and carries the backend we asked for.
  got=$("$VENV/bin/python" -c 'from desktop.engine import backend_info; print(backend_info().compiled_gpu or "cpu")' 2>&1) \
    || { REASON="the $1 build does not load: $(echo "$got" | tail -n 1)"; return 1; }
  got=$(echo "$got" | tail -n 1)
  if [ "$got" != "$1" ]; then
    REASON="the $1 build reports backend '$got'"; return 1
  fi
}

DRY_RUN=""
CUDA_RUNTIME_DIR=""  # set when the CUDA toolkit comes from PyPI
[ "${1:-}" != --dry-run ] || DRY_RUN=1
choose_gpu
say "GPU backend: $GPU ($WHY)"
REASON=""
if [ -n "$DRY_RUN" ]; then
  if cmake_args_for "$GPU"; then
    say "would build $GPU with CMAKE_ARGS='$ARGS${EDGEDESK_CMAKE_ARGS:+ $EDGEDESK_CMAKE_ARGS}'${CFLAGS:+ CFLAGS='$CFLAGS'}"
  else
    say "would fall back to the CPU build: $REASON"
  fi
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
if ! install_variant "$GPU"; then
  [ "$GPU" != cpu ] || { say "the CPU build failed: $REASON"; exit 1; }
  say "falling back to the CPU build: $REASON"
  install_variant cpu || { say "the CPU build failed too: $REASON"; exit 1; }
fi
"$VENV/bin/edgedesk" --version
