"""The figures of ``scripts/device-check.sh``: one printed line per step, one JSON file.

Run by the script (``python -m tests.benchmarks.device_figures COMMAND ...``):

- ``gpu OUT.json``: the GPU's name, memory and peak memory bandwidth (a table of
  published figures by name, e.g. H200 4.8 TB/s; else NVML's memory clock x 2 x bus
  width);
- ``fraction GPU.json BENCH.json MODEL.gguf LABEL``: decode speed as a fraction of the
  bandwidth limit (a dense model reads every weight but the token embedding once per
  generated token, so tok/s x weight bytes per token <= bandwidth);
- ``ratio OURS.json PEER.json LABEL``: EdgeDesk's decode tok/s (``edgedesk bench
  --json``) over llama-server's (``tests/benchmarks/bench_gpu_peer.py --json``);
- ``collect OUT.json FILE...``: every step's figures in one file.

Plain functions beside the command line, so the arithmetic is tested without a GPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from desktop.catalog._gguf_info import _parse_header, _tensor_bytes

# Published peak memory bandwidth (bytes/s) by a part of the device name. The longest
# match wins ("H100 NVL" before "H100"). NVML's clock x bus width reads higher than
# these for HBM (H200: 3201 MHz x 2 x 6144 bit = 4.9 TB/s against 4.8 published).
PEAK_BANDWIDTH = {
    "H200": 4.8e12,
    "H100 NVL": 3.9e12,
    "H100 PCIe": 2.0e12,
    "H100": 3.35e12,
    "GH200": 4.0e12,
    "A100-SXM4-80GB": 2.039e12,
    "A100 80GB PCIe": 1.935e12,
    "A100": 1.555e12,
    "L40S": 0.864e12,
    "RTX 4090": 1.008e12,
    "RTX 3090": 0.936e12,
}


def peak_bandwidth(name: str, memory_clock_mhz: int = 0, bus_bits: int = 0) -> tuple[float, str]:
    """Peak memory bandwidth in bytes/s of the GPU called ``name`` and where it comes
    from: "table" (published), "nvml" (clock x 2 x bus width) or "unknown" (0.0)."""
    for key in sorted(PEAK_BANDWIDTH, key=len, reverse=True):
        if key.lower() in name.lower():
            return PEAK_BANDWIDTH[key], "table"
    if memory_clock_mhz > 0 and bus_bits > 0:
        return memory_clock_mhz * 1e6 * 2 * bus_bits / 8, "nvml"
    return 0.0, "unknown"


def weight_bytes_per_token(model: Path) -> int:
    """Weight bytes a dense model reads per generated token: every tensor but the token
    embedding (a lookup of one row), unless the embedding doubles as the output."""
    _meta, tensors, _start = _parse_header(model)
    names = {name for name, _dims, _kind, _offset in tensors}
    tied = "output.weight" not in names
    return sum(
        _tensor_bytes(dims, kind)[1]
        for name, dims, kind, _offset in tensors
        if name != "token_embd.weight" or tied
    )


def fraction(gpu: dict[str, Any], bench: dict[str, Any], model: Path) -> dict[str, Any]:
    """Decode tok/s of an ``edgedesk bench --json`` report against the bandwidth limit."""
    per_token = weight_bytes_per_token(model)
    tok_s = float(bench["generation_tokens_per_s"])
    bandwidth = float(gpu["bandwidth_bytes_s"])
    limit = bandwidth / per_token if per_token and bandwidth else 0.0
    direct = float((bench.get("baseline") or {}).get("generation_tokens_per_s") or 0.0)
    return {
        "model": model.name,
        "weight_bytes_per_token": per_token,
        "direct_tok_s": round(direct, 2) if direct else None,
        "gpu_layers": bench.get("gpu_layers"),
        "edgedesk_tok_s": round(tok_s, 2),
        "bandwidth_limit_tok_s": round(limit, 2),
        "fraction_of_limit": round(tok_s / limit, 4) if limit else None,
        "prompt_tokens_per_s": bench.get("prompt_tokens_per_s"),
    }


def ratio(ours: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any]:
    """EdgeDesk's decode tok/s over llama-server's, from their JSON reports."""
    mine = float(ours["generation_tokens_per_s"])
    theirs = float(peer["decode_tok_s"])
    return {
        "edgedesk_tok_s": round(mine, 2),
        "llama_server_tok_s": round(theirs, 2),
        "ratio": round(mine / theirs, 3) if theirs else None,
        "n_cpu_moe": ours.get("n_cpu_moe"),
        "gpu_layers": ours.get("gpu_layers"),
    }


def _gpu(out: Path) -> str:
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    name = str(pynvml.nvmlDeviceGetName(handle))
    clock = int(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM))
    bus = int(pynvml.nvmlDeviceGetMemoryBusWidth(handle))
    total = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
    bandwidth, source = peak_bandwidth(name, clock, bus)
    nvml = clock * 1e6 * 2 * bus / 8
    out.write_text(
        json.dumps(
            {
                "gpu": name,
                "memory_bytes": total,
                "memory_clock_mhz": clock,
                "bus_width_bits": bus,
                "bandwidth_bytes_s": bandwidth,
                "bandwidth_source": source,
                "nvml_bandwidth_bytes_s": nvml,
            },
            indent=2,
        )
    )
    return (
        f"{name}: {total / 2**30:.0f} GiB, peak bandwidth {bandwidth / 1e12:.2f} TB/s "
        f"({source}; NVML's clock x bus width: {nvml / 1e12:.2f} TB/s)"
    )


def main(argv: list[str]) -> int:
    """Run one command (see the module docstring); print its line."""
    command, *rest = argv or ["help"]
    if command == "gpu" and len(rest) == 1:
        print(_gpu(Path(rest[0])))
        return 0
    if command == "fraction" and len(rest) == 4:
        gpu, bench = (json.loads(Path(p).read_text()) for p in rest[:2])
        got = fraction(gpu, bench, Path(rest[2]))
        Path(rest[3]).write_text(json.dumps(got, indent=2))
        share = got["fraction_of_limit"]
        print(
            f"{got['model']}: edgedesk decode {got['edgedesk_tok_s']:.1f} tok/s x "
            f"{got['weight_bytes_per_token'] / 1e9:.2f} GB/token = "
            f"{got['edgedesk_tok_s'] * got['weight_bytes_per_token'] / 1e12:.2f} TB/s, "
            f"{100 * share:.1f}% of the bandwidth limit "
            f"({got['bandwidth_limit_tok_s']:.0f} tok/s)"
            + (
                f"; llama-cpp-python direct {got['direct_tok_s']:.1f} tok/s"
                if got["direct_tok_s"]
                else ""
            )
            if share is not None
            else f"{got['model']}: edgedesk decode {got['edgedesk_tok_s']:.1f} tok/s "
            "(no bandwidth figure for this GPU)"
        )
        return 0
    if command == "ratio" and len(rest) == 3:
        ours, peer = (json.loads(Path(p).read_text()) for p in rest[:2])
        got = ratio(ours, peer)
        Path(rest[2]).write_text(json.dumps(got, indent=2))
        print(
            f"edgedesk {got['edgedesk_tok_s']:.1f} tok/s, llama-server "
            f"{got['llama_server_tok_s']:.1f} tok/s: {got['ratio']}x"
        )
        return 0
    if command == "collect" and len(rest) >= 1:
        figures = {
            Path(p).stem: json.loads(Path(p).read_text()) for p in rest[1:] if Path(p).is_file()
        }
        Path(rest[0]).write_text(json.dumps(figures, indent=2))
        print(f"figures of {len(figures)} steps in {rest[0]}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
