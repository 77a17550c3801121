"""scripts/device-check.sh without a GPU: its --dry-run (the steps, the inputs checked)
and the arithmetic of its figures (tests/benchmarks/device_figures.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.benchmarks.device_figures import fraction, peak_bandwidth, ratio, weight_bytes_per_token
from tests.fixtures.real_shape import SHAPES, write_real_shape

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "device-check.sh"
STEPS = ["gpu", "build", "venv", "small", "9b", "peer", "flash", "pytest"]


def _dry_run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "--dry-run", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_dry_run_lists_every_step_within_ten_minutes_and_runs_nothing(
    tmp_path: Path,
) -> None:
    done = _dry_run(DEVICE_CHECK_OUT=str(tmp_path / "out"), EDGEDESK_VENV=str(tmp_path / "v"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    listed = [line.split()[3] for line in lines if line.startswith("device-check: step ")]
    assert listed == STEPS
    assert "--n-cpu-moe 30 on both" in done.stdout  # the flash step's split
    assert "-c 8192" in done.stdout
    total = next(line for line in lines if "in all (limit 600)" in line)
    assert int(total.split("about ")[1].split(" s")[0]) <= 600
    assert any(line.startswith("device-check: needs nvidia-smi: ") for line in lines)
    assert not (tmp_path / "out").exists() and not (tmp_path / "v").exists()


def test_the_dry_run_lists_only_the_steps_asked_for() -> None:
    done = _dry_run(STEPS="gpu build venv peer", N_CPU_MOE="12", REAL_CTX="4096")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[3] for line in done.stdout.splitlines() if " step " in line]
    assert listed == ["gpu", "build", "venv", "peer"]
    assert "-c 4096" in done.stdout


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ((), {"N_CPU_MOE": "half"}, "N_CPU_MOE must be a whole number (got 'half')"),
        ((), {"N_CPU_MOE": "60"}, "N_CPU_MOE must be 0-48"),
        ((), {"TOKENS": "0"}, "TOKENS must be 1 or more"),
        ((), {"STEPS": "gpu bogus"}, "unknown step 'bogus'"),
        (("/nonexistent/model.gguf",), {}, "no model file /nonexistent/model.gguf"),
        (("--fast",), {}, "unknown option --fast"),
        ((), {"STEPS": "peer"}, "the build step is left out: set LLAMA_CUDA_DIR"),
        ((), {"EDGEDESK_LLAMA_SRC": "/nonexistent"}, "holds no vendor/llama.cpp"),
    ],
)
def test_bad_inputs_are_refused_in_one_line_before_anything_runs(
    args: tuple[str, ...], env: dict[str, str], message: str
) -> None:
    done = _dry_run(*args, **env)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "step 1" not in done.stdout


def test_the_venv_step_left_out_needs_a_venv(tmp_path: Path) -> None:
    done = _dry_run(STEPS="9b", EDGEDESK_VENV=str(tmp_path / "none"), LLAMA_CUDA_DIR="/x")
    assert done.returncode == 2
    assert "the venv step is left out" in done.stderr


def test_the_bandwidth_is_the_published_figure_or_nvmls() -> None:
    assert peak_bandwidth("NVIDIA H200") == (4.8e12, "table")
    assert peak_bandwidth("NVIDIA H100 NVL")[0] == 3.9e12  # the longer name wins
    assert peak_bandwidth("NVIDIA H100 80GB HBM3")[0] == 3.35e12
    # Not in the table: memory clock x 2 (double data rate) x bus width in bytes.
    assert peak_bandwidth("Some GPU", 1000, 256) == (1000e6 * 2 * 32, "nvml")
    assert peak_bandwidth("Some GPU") == (0.0, "unknown")


def test_the_9b_reads_every_weight_but_its_embedding_per_token(tmp_path: Path) -> None:
    path = write_real_shape(tmp_path / "9b.gguf", "glm4-9b", header_only=True)
    shape = SHAPES["glm4-9b"]()
    embedding = next(t.nbytes for t in shape.tensors if t.name == "token_embd.weight")
    per_token = weight_bytes_per_token(path)
    assert per_token == sum(t.nbytes for t in shape.tensors) - embedding
    assert 5.5e9 < per_token < 6.0e9
    gpu = {"bandwidth_bytes_s": 4.8e12}
    bench = {"generation_tokens_per_s": 500.0, "gpu_layers": 41, "baseline": None}
    got = fraction(gpu, bench, path)
    assert got["bandwidth_limit_tok_s"] == pytest.approx(4.8e12 / per_token, abs=0.01)
    assert got["fraction_of_limit"] == pytest.approx(500 * per_token / 4.8e12, abs=1e-4)
    assert got["direct_tok_s"] is None
    json.dumps(got)  # it goes into device-check.json


def test_the_ratio_is_edgedesk_over_llama_server() -> None:
    got = ratio(
        {"generation_tokens_per_s": 90.0, "n_cpu_moe": 30, "gpu_layers": 48},
        {"decode_tok_s": 100.0},
    )
    assert got["ratio"] == 0.9 and got["n_cpu_moe"] == 30
    assert ratio({"generation_tokens_per_s": 1.0}, {"decode_tok_s": 0.0})["ratio"] is None
