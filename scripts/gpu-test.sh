#!/usr/bin/env bash
# The opt-in GPU tests (tests/gpu, marker gpu) in their own venv with a GPU build of
# llama-cpp-python, made by scripts/install.sh (the wheel is cached: reruns are fast).
#
# Without a GPU this uses Vulkan on Mesa's software device (lavapipe): see docs/gpu.md
# for the packages, and for VULKAN_INCLUDE_DIR where the system's Vulkan headers are too
# old (Debian bookworm). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
export EDGEDESK_VENV=${EDGEDESK_VENV:-.venv-gpu}
export EDGEDESK_EXTRAS=test
if [ -z "${EDGEDESK_GPU:-}" ] && ! command -v nvidia-smi >/dev/null && [ "$(uname -s)" != Darwin ]; then
  export EDGEDESK_GPU=vulkan  # no GPU detected: the software Vulkan device stands in
fi
./scripts/install.sh
# llama.cpp skips CPU-type Vulkan devices (lavapipe) unless they are selected by index.
if [ -z "${GGML_VK_VISIBLE_DEVICES:-}" ] && command -v vulkaninfo >/dev/null \
   && ! vulkaninfo --summary 2>/dev/null | grep -qE 'PHYSICAL_DEVICE_TYPE_(DISCRETE|INTEGRATED)_GPU'; then
  export GGML_VK_VISIBLE_DEVICES=0
  echo "gpu-test: no hardware Vulkan GPU; using the software device (GGML_VK_VISIBLE_DEVICES=0)"
fi
exec "$EDGEDESK_VENV/bin/python" -m pytest -m gpu tests/gpu -s -p no:cacheprovider "$@"
