"""Mixture-of-experts placement from the command line: ``models info --gpu-memory/--ram``
plans for another machine, ``--cpu-moe`` / ``--n-cpu-moe N`` and ``engine.cpu_moe``
choose where the experts go, and ``--json`` carries it.

The planned model is GLM-4.7-Flash's real header (a sparse file: only the header is
read); the loaded one is the suite's tiny MoE GGUF, whose expert overrides llama.cpp
reports in its own log.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import Paths
from desktop.cli import main
from tests.fixtures.real_shape import write_real_shape
from tests.fixtures.tiny_moe import write_tiny_moe

GIB = 1024**3


@pytest.fixture(scope="module")
def flash(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("real-shape")
    return write_real_shape(folder / "GLM-4.7-Flash-Q4_K_M.gguf", "glm-4.7-flash", header_only=True)


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["models", "info", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_models_info_plans_the_experts_for_a_machine_with_an_8_gb_gpu(
    flash: Path, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _plan(capsys, str(flash), "--gpu-memory", "8G", "--ram", "64G")
    plan = data["plan"]
    assert plan["gpu_layers"] == plan["total_layers"] == 48
    assert 0 < plan["experts_in_ram_layers"] < plan["expert_layers"] == 46
    assert 0 < plan["vram_bytes"] <= 8 * GIB
    assert plan["ram_bytes"] > plan["vram_bytes"]
    assert plan["estimated_bytes"] == plan["vram_bytes"] + plan["ram_bytes"]
    assert plan["placement"].startswith(f"experts of {plan['experts_in_ram_layers']}/46 layers")
    assert data["planned_for"] == "the --gpu-memory/--ram machine"
    assert "planned GPU" in data["hardware"]

    assert main(["models", "info", str(flash), "--gpu-memory", "8GB", "--ram", "64GB"]) == 0
    text = capsys.readouterr().out
    assert "placement      experts of" in text and "the rest on the GPU" in text


def test_the_flags_and_the_setting_choose_where_the_experts_go(
    flash: Path, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machine = ("--gpu-memory", "24G", "--ram", "64G")
    assert _plan(capsys, str(flash), *machine)["plan"]["experts_in_ram_layers"] == 0
    every = _plan(capsys, str(flash), *machine, "--cpu-moe", "--ctx", "8192")["plan"]
    assert every["experts_in_ram_layers"] == 46 and every["n_cpu_moe"] == 47
    assert every["vram_bytes"] < 4 * GIB  # attention, shared experts, KV cache only
    # Unset, the context is what lets all but the experts stay on the GPU.
    small = _plan(capsys, str(flash), "--gpu-memory", "8G", "--ram", "64G", "--cpu-moe")
    assert small["plan"]["gpu_layers"] == 48 and small["plan"]["vram_bytes"] <= 8 * GIB
    assert 8192 <= small["plan"]["context_length"] < 202752
    some = _plan(capsys, str(flash), *machine, "--n-cpu-moe", "11")["plan"]
    assert some["n_cpu_moe"] == 11 and some["experts_in_ram_layers"] == 10

    settings = Paths.from_env({"EDGEDESK_HOME": str(edgedesk_home)}).settings_file
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('[engine]\ncpu_moe = "all"\n')
    assert _plan(capsys, str(flash), *machine)["plan"]["experts_in_ram_layers"] == 46
    settings.write_text('[engine]\ncpu_moe = "none"\n')
    whole = _plan(capsys, str(flash), "--gpu-memory", "8G", "--ram", "64G")["plan"]
    assert whole["experts_in_ram_layers"] == 0 and whole["gpu_layers"] < 24
    settings.write_text("[engine]\ncpu_moe = 5\n")
    assert _plan(capsys, str(flash), *machine)["plan"]["n_cpu_moe"] == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cpu-moe", "--n-cpu-moe", "3"], "not allowed with argument"),
        (["--n-cpu-moe", "-1"], "must be between 0 and 10000"),
        (["--gpu-memory", "lots"], "is not an amount of memory"),
    ],
)
def test_bad_expert_flags_are_refused_in_one_line(
    flash: Path,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["models", "info", str(flash), *args])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_bad_setting_is_refused_with_its_name(
    flash: Path, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Paths.from_env({"EDGEDESK_HOME": str(edgedesk_home)}).settings_file
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('[engine]\ncpu_moe = "some"\n')
    code = main(["models", "info", str(flash)])
    assert code != 0
    assert "cpu_moe" in capsys.readouterr().err


def test_run_keeps_the_experts_it_is_told_to_in_ram(
    tmp_path: Path,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
    llama_log: list[str],
) -> None:
    model = write_tiny_moe(tmp_path / "tiny-moe.gguf")
    settings = Paths.from_env({"EDGEDESK_HOME": str(edgedesk_home)}).settings_file
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("[engine]\nworker_process = false\n")  # llama.cpp's log is ours
    code = main(["run", str(model), "hello", "--max-tokens", "3", "--n-cpu-moe", "1", "--stats"])
    assert code == 0
    overridden = {
        m.group(1) for line in llama_log if (m := re.search(r"tensor (\S+) .* to CPU", line))
    }
    assert overridden == {f"blk.0.ffn_{part}_exps.weight" for part in ("gate", "up", "down")}
    assert "3 generated tokens" in capsys.readouterr().err


def test_models_list_says_where_the_experts_go_before_download(
    edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "list", "--gpu-memory", "8G", "--ram", "32G", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {row["id"]: row for row in data["models"]}
    assert "planned GPU 8.0 GiB" in data["hardware"] and data["gpu_offload"] is True
    flash = rows["glm-4.7-flash"]
    assert flash["fit"] == "fits in RAM, slower"
    assert re.fullmatch(
        r"about \d+% of the experts in RAM, the rest on the GPU", flash["placement"]
    )
    assert rows["glm-4-9b-0414"]["placement"] is None  # dense: fits the 8 GB GPU whole
    assert rows["glm-4.5-air"]["fit"] == "won't fit" and rows["glm-4.5-air"]["placement"] is None
    # A bigger GPU keeps more of the experts: the share in RAM falls.
    assert main(["models", "list", "--gpu-memory", "12G", "--ram", "32G", "--json"]) == 0
    bigger = {row["id"]: row for row in json.loads(capsys.readouterr().out)["models"]}

    def share(row: dict[str, Any]) -> int:
        return int(re.findall(r"\d+", row["placement"])[0])

    assert share(bigger["glm-4.7-flash"]) < share(flash)
    assert main(["models", "list", "--gpu-memory", "24G", "--ram", "32G", "--json"]) == 0
    roomy = {row["id"]: row for row in json.loads(capsys.readouterr().out)["models"]}
    assert roomy["moonlight-16b-a3b"]["fit"] == "fits on GPU"
    assert roomy["moonlight-16b-a3b"]["placement"] is None
    assert main(["models", "list", "--gpu-memory", "8G", "--ram", "32G"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Planned for: ") and "% of the experts in RAM, the rest on" in text


def test_models_info_plans_a_catalog_model_before_download_for_the_given_machine(
    edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not downloaded: the verdict comes from the catalog's size and expert share, and
    # must be the one models list gives for the same --gpu-memory/--ram machine.
    args = ["glm-4.7-flash", "--gpu-memory", "8G", "--ram", "32G"]
    assert main(["models", "list", "--gpu-memory", "8G", "--ram", "32G", "--json"]) == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)["models"]}
    assert main(["models", "info", *args, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["fit"] == listed["glm-4.7-flash"]["fit"] == "fits in RAM, slower"
    assert info["placement"] == listed["glm-4.7-flash"]["placement"]
    assert info["planned_for"] == "the --gpu-memory/--ram machine"
    assert "planned GPU 8.0 GiB" in info["hardware"]
    assert main(["models", "info", *args]) == 0
    text = capsys.readouterr().out
    assert "recommended there: Q4_K_M — fits in RAM, slower" in text
    assert "% of the experts in RAM, the rest on the GPU" in text
    assert "planned for    RAM 32.0 GiB" in text


def test_doctor_says_where_an_installed_moes_weights_go(
    tmp_path: Path, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_tiny_moe(tmp_path / "tiny-moe.gguf")
    assert main(["models", "import", str(model)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["models"]
    # This build runs on the CPU: every expert of both layers is in RAM, no VRAM.
    assert row["experts_in_ram_layers"] == 2 and row["vram_bytes"] == 0
    assert row["ram_bytes"] == row["estimated_bytes"] > 0
    assert row["placement"].endswith(" RAM") and "VRAM" not in row["placement"]
    assert main(["doctor"]) == 0
    assert row["placement"] in capsys.readouterr().out
