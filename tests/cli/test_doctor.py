"""`edgedesk doctor`: the backend, the devices, why no GPU is used, and model fit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from desktop.cli.doctor import format_report, parse_vulkaninfo


def _edgedesk(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "EDGEDESK_HOME": str(home)},
    )


def test_doctor_explains_this_cpu_machine_and_fits_installed_models(
    tiny_chat: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    imported = _edgedesk("models", "import", str(tiny_chat), home=home)
    assert imported.returncode == 0, imported.stderr
    done = _edgedesk("doctor", "--json", home=home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["backend"]["name"] == "cpu" and "CPU" in report["backend"]["compiled"]
    cpu = [d for d in report["devices"] if d["kind"] == "cpu"]
    assert cpu and cpu[0]["memory_total_bytes"] > 0 and not cpu[0]["offload"]
    assert report["gpu_used"] is False
    assert "CPU only" in report["why_not_gpu"] and "install.sh" in report["why_not_gpu"]
    [model] = report["models"]
    assert model["fit"].startswith("fits in RAM") and model["gpu_layers"] == 0

    text = _edgedesk("doctor", home=home)
    assert text.returncode == 0, text.stderr
    assert "backend:   cpu" in text.stdout and "GPU:       not used" in text.stdout
    # llama.cpp's compiled CPU features against this CPU's: built here, nothing missing.
    assert report["cpu"]["missing"] == [] and report["cpu"]["amx"] in (
        "absent",
        "usable",
        "listed, not usable",
        "listed, not checked",
    )
    assert "cpu:       llama.cpp built for" in text.stdout and "this CPU has" in text.stdout
    assert model["id"] in text.stdout


def test_a_damaged_model_is_reported_not_fatal(tiny_chat: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    copy = tmp_path / "damaged.gguf"
    copy.write_bytes(tiny_chat.read_bytes())
    assert _edgedesk("models", "import", str(copy), home=home).returncode == 0
    copy.write_bytes(copy.read_bytes()[:64])  # the disk lost the rest
    done = _edgedesk("doctor", "--json", home=home)
    assert done.returncode == 0, done.stderr
    [model] = json.loads(done.stdout)["models"]
    assert model["fit"] == "unreadable" and model["reason"]


def test_vulkan_driver_names_come_from_vulkaninfo() -> None:
    summary = """GPU0:
	deviceType         = PHYSICAL_DEVICE_TYPE_CPU
	deviceName         = llvmpipe (LLVM 15.0.6, 256 bits)
	driverID           = DRIVER_ID_MESA_LLVMPIPE
	driverName         = llvmpipe
	driverInfo         = Mesa 22.3.6 (LLVM 15.0.6)
"""
    assert parse_vulkaninfo(summary) == {
        "llvmpipe (LLVM 15.0.6, 256 bits)": "llvmpipe Mesa 22.3.6 (LLVM 15.0.6)"
    }


def test_the_text_report_names_each_device_and_its_driver() -> None:
    report = {
        "version": "1",
        "hardware": "RAM 1/2 GiB free",
        "gpu_used": True,
        "why_not_gpu": "",
        "models": [],
        "backend": {"describe": "vulkan (GPU offload)", "compiled": ["Vulkan", "CPU"]},
        "devices": [
            {
                "name": "Vulkan0",
                "description": "Radeon",
                "kind": "gpu",
                "offload": True,
                "memory_free_bytes": 2 * 1024**3,
                "memory_total_bytes": 8 * 1024**3,
                "driver": "radv Mesa 24",
            }
        ],
    }
    text = "\n".join(format_report(report))
    assert "vulkan (GPU offload)  (compiled in: Vulkan, CPU)" in text
    assert (
        "Vulkan0    Radeon  [gpu, offload]  2.0 GiB free of 8.0 GiB  driver: radv Mesa 24" in text
    )
    assert "GPU:       used" in text


SAPPHIRE = "flags\t\t: avx avx2 fma f16c avx512f avx512_vnni amx_tile amx_int8 amx_bf16\n"


def _amx_lines(system_info: str) -> list[str]:
    from desktop.engine._hardware.cpu_features import as_report, cpu_features
    from desktop.machine._doctor import _cpu_lines

    ran = cpu_features(system_info, SAPPHIRE, probe=lambda: (True, "LDTILECFG … ran"))
    return _cpu_lines(dict(as_report(ran)))


def test_doctor_says_why_llama_cpps_amx_kernels_are_left_out_where_tiles_run() -> None:
    # The installer leaves them out (scripts/amx-check.sh): they crash on this llama.cpp.
    text = "\n".join(_amx_lines("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 0 | "))
    assert "AMX: usable" in text and "AMX probe: LDTILECFG … ran" in text
    assert "AMX kernels left out" in text and "EDGEDESK_AMX=1 ./scripts/install.sh" in text
    assert "warning" not in text  # nothing built that this CPU cannot run


def test_doctor_warns_when_the_amx_kernels_were_asked_for() -> None:
    text = "\n".join(_amx_lines("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | "))
    assert "kernels are built in (EDGEDESK_AMX=1)" in text
    assert "reinstall without EDGEDESK_AMX=1" in text and "left out" not in text
