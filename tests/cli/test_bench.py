"""`edgedesk bench` smoke test: the report has every field, through the real paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from desktop.machine._bench import build_prompt
from desktop.machine._bench_clients import percentile


def test_bench_reports_every_figure_with_ratios(tiny_chat: Path, tmp_path: Path) -> None:
    saved = tmp_path / "bench.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop",
            "bench",
            str(tiny_chat),
            "--tokens",
            "8",
            "--clients",
            "2",
            "--prompt-lengths",
            "16,64",
            "--ctx",
            "512",
            "--compare",
            "--json",
            "--save",
            str(saved),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "EDGEDESK_HOME": str(tmp_path / "home")},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert json.loads(saved.read_text()) == report
    assert report["model"] == "tiny-chat" and report["context_length"] >= 512
    assert report["load_cold_s"] > 0 and report["load_warm_s"] > 0
    assert set(report["prompt_tokens_per_s"]) == {"16", "64"}
    assert all(v > 0 for v in report["prompt_tokens_per_s"].values())
    assert report["generation_tokens_per_s"] > 0 and report["time_to_first_token_s"] > 0
    http = report["http"]
    assert http["clients"] == 2 and http["generation_tokens_per_s"] > 0
    assert http["latency"]["p50_s"] <= http["latency"]["p99_s"]
    assert report["baseline"]["generation_tokens_per_s"] > 0
    assert {
        "generation_vs_direct",
        "http_generation_vs_direct",
        "ttft_overhead_ms",
        "prompt_64_vs_direct",
    } <= set(report["ratios"])
    assert report["peak_ram_bytes"] > 10 * 1024**2
    engine = report["engine"]  # what the slots did while the HTTP clients ran
    assert engine["slots_total"] >= 1 and 1 <= engine["peak_slots_busy"] <= engine["slots_total"]
    assert {"peak_queue_length", "prompt_tokens_cached", "tokens_per_decode_step"} <= set(engine)
    assert "prompt processing, 64 tokens" in result.stderr  # progress display


def test_chart_renders_every_figure_to_png(qapp, tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    from desktop.ui.models.bench_chart import render_chart

    report = {
        "model": "m",
        "backend": "cpu",
        "hardware": "test machine",
        "prompt_tokens_per_s": {"128": 100.0},
        "generation_tokens_per_s": 20.0,
        "http": {"generation_tokens_per_s": 19.0},
        "baseline": {"prompt_tokens_per_s": {"128": 110.0}, "generation_tokens_per_s": 21.0},
    }
    out = render_chart(report, tmp_path / "bench.png")
    image = QImage(str(out))
    assert not image.isNull() and image.width() == 900
    # Three figures: prompt, generation, HTTP generation; each draws our blue bar.
    blue = sum(1 for y in range(image.height()) if image.pixelColor(320, y).name() == "#2f6fdf")
    assert blue >= 3 * 10


def test_bench_rejects_bad_arguments(tiny_chat: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "desktop", "bench", str(tiny_chat), "--prompt-lengths", "abc"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "--prompt-lengths" in result.stderr
    assert "Traceback" not in result.stderr


def test_prompts_hit_the_requested_length_and_differ_by_salt() -> None:
    def words(text: str) -> list[int]:
        return list(range(len(text.split())))

    a, b = build_prompt(50, words, 1), build_prompt(50, words, 2)
    assert 45 <= len(words(a)) <= 50 and a != b


def test_percentiles_use_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.9), percentile(values, 0.99)) == (
        50.0,
        90.0,
        99.0,
    )
