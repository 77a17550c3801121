"""``edgedesk bench MODEL``: load, prompt, generation and HTTP figures on this machine."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from desktop.base.errors import InvalidRequest
from desktop.base.filebytes import format_bytes
from desktop.cli.arguments import context_for
from desktop.cli.options import moe_settings
from desktop.machine import BenchReport, run_bench


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bench`` verb."""
    from desktop.cli.options import common_options, moe_options

    parser = sub.add_parser(
        "bench",
        parents=[common_options(), moe_options()],
        help="measure a model's speed on this machine",
        description="Load MODEL as EdgeDesk would and measure load time, "
        "prompt processing, generation, time to first token, the same "
        "through the local HTTP server, and latency under load.",
    )
    parser.add_argument("model", metavar="MODEL", help="catalog id or .gguf path")
    parser.add_argument("--ctx", type=int, default=None, metavar="N")
    parser.add_argument(
        "--tokens",
        type=int,
        default=128,
        metavar="N",
        help="tokens to generate per request (default 128)",
    )
    parser.add_argument(
        "--clients",
        type=int,
        default=4,
        metavar="N",
        help="concurrent HTTP clients for the latency figures (default 4)",
    )
    parser.add_argument("--prompt-lengths", default="128,512,2048", metavar="A,B,C")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also run llama-cpp-python directly and print ratios to it",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--save", type=Path, metavar="FILE", help="save the report as JSON")
    parser.add_argument(
        "--chart", type=Path, metavar="FILE.png", help="render the figures as a PNG chart"
    )
    parser.set_defaults(handler=handle)


def _lengths(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise InvalidRequest(
            f"--prompt-lengths must be numbers like 128,512 (got {text!r})"
        ) from None
    if not values or any(v < 8 for v in values):
        raise InvalidRequest("--prompt-lengths needs at least one length of 8 tokens or more")
    return values


def handle(args: argparse.Namespace) -> int:
    """Run the benchmark and print (and optionally save/chart) the report."""
    if not 1 <= args.tokens <= 8192:
        raise InvalidRequest("--tokens must be between 1 and 8192")
    if not 1 <= args.clients <= 64:
        raise InvalidRequest("--clients must be between 1 and 64")
    if args.ctx is not None and not 256 <= args.ctx <= 1_048_576:
        raise InvalidRequest(f"--ctx {args.ctx} is out of range; use 256 to 1048576 tokens")
    lengths = _lengths(args.prompt_lengths)
    ctx = context_for(args, moe_settings(args))
    try:
        report = run_bench(
            ctx,
            args.model,
            tokens=args.tokens,
            clients=args.clients,
            context_length=args.ctx,
            compare=args.compare,
            prompt_lengths=lengths,
            progress=lambda step: print(f"… {step}", file=sys.stderr, flush=True),
        )
    finally:
        ctx.close()
    data = report.to_dict()
    if args.save:
        args.save.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.chart:
        chart = importlib.import_module("desktop.ui.models.bench_chart")
        chart.render_chart(data, args.chart)
    print(json.dumps(data, indent=2) if args.json else format_report(report))
    return 0


def format_report(report: BenchReport) -> str:
    """The report as an aligned text table, with ratios when a baseline was run."""
    base = report.baseline
    ratio = report.ratios

    def row(label: str, value: str, note: str = "") -> str:
        return f"  {label:<34} {value:>14}  {note}"

    lines = [
        f"{report.model}  ({report.path})",
        f"  machine: {report.hardware}; backend: {report.backend}",
        f"  plan: context {report.context_length}, {report.gpu_layers} GPU layers"
        + (f", experts of the first {report.n_cpu_moe} layers in RAM" if report.n_cpu_moe else ""),
        "",
    ]
    lines.append(
        row(
            "load, cold (from disk)",
            f"{report.load_cold_s:.2f} s",
            f"direct {base['load_s']:.2f} s" if base else "",
        )
    )
    lines.append(row("load, warm", f"{report.load_warm_s:.2f} s"))
    for length, speed in report.prompt_tokens_per_s.items():
        key = f"prompt_{length}_vs_direct"
        lines.append(
            row(
                f"prompt processing, {length} tokens",
                f"{speed:.1f} tok/s",
                f"x{ratio[key]:.3f} of direct" if key in ratio else "",
            )
        )
    lines.append(
        row(
            "generation",
            f"{report.generation_tokens_per_s:.1f} tok/s",
            f"x{ratio['generation_vs_direct']:.3f} of direct"
            if "generation_vs_direct" in ratio
            else "",
        )
    )
    lines.append(
        row(
            "time to first token",
            f"{report.time_to_first_token_s * 1000:.0f} ms",
            f"{ratio['ttft_overhead_ms']:+.1f} ms vs direct" if "ttft_overhead_ms" in ratio else "",
        )
    )
    http = report.http
    if "skipped" in http:
        lines.append(row("HTTP figures", "skipped", str(http["skipped"])))
    elif http:
        lines.append(
            row(
                "HTTP streamed generation",
                f"{http['generation_tokens_per_s']:.1f} tok/s",
                f"x{ratio['http_generation_vs_direct']:.3f} of direct"
                if "http_generation_vs_direct" in ratio
                else "",
            )
        )
        lines.append(
            row(
                "HTTP time to first token",
                f"{http['time_to_first_token_s'] * 1000:.0f} ms",
                f"{ratio['http_ttft_overhead_ms']:+.1f} ms vs direct"
                if "http_ttft_overhead_ms" in ratio
                else "",
            )
        )
        latency = http["latency"]
        lines.append(
            row(
                f"latency, {http['clients']} clients p50/p90/p99",
                f"{latency['p50_s']:.2f}/{latency['p90_s']:.2f}/{latency['p99_s']:.2f} s",
            )
        )
    engine = report.engine
    if engine:
        lines.append(
            row(
                "slots busy (peak) / total",
                f"{engine.get('peak_slots_busy', 0)} / {engine.get('slots_total', '?')}",
            )
        )
        lines.append(row("queue length (peak)", str(engine.get("peak_queue_length", 0))))
        if "decode_steps" in engine:
            lines.append(
                row(
                    "prompt tokens cached / processed",
                    f"{engine['prompt_tokens_cached']} / {engine['prompt_tokens_processed']}",
                )
            )
            lines.append(row("tokens per decode step", f"{engine['tokens_per_decode_step']:.2f}"))
    lines.append(row("peak RAM (process)", format_bytes(report.peak_ram_bytes, memory=True)))
    if report.peak_vram_bytes is not None:
        lines.append(row("VRAM in use", format_bytes(report.peak_vram_bytes, memory=True)))
    return "\n".join(lines)
