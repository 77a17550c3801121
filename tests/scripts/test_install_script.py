"""scripts/install.sh: which llama.cpp backend it builds on which machine, and why.

Run with --dry-run (it prints the choice and the build flags and changes nothing), with
fake vendor tools first on PATH standing in for the machine's GPU.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NO_NVIDIA = "#!/bin/sh\nexit 9\n"  # nvidia-smi without a driver fails
LAVAPIPE_ONLY = """#!/bin/sh
cat <<'OUT'
GPU0:
	deviceType         = PHYSICAL_DEVICE_TYPE_CPU
	deviceName         = llvmpipe (LLVM 15.0.6, 256 bits)
OUT
"""
RADEON = """#!/bin/sh
cat <<'OUT'
GPU0:
	deviceType         = PHYSICAL_DEVICE_TYPE_CPU
	deviceName         = llvmpipe (LLVM 15.0.6, 256 bits)
GPU1:
	deviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
	deviceName         = AMD Radeon RX 7600 (RADV NAVI33)
OUT
"""
TWO_NVIDIA = "#!/bin/sh\nprintf 'NVIDIA GeForce RTX 4070, 8.9\\nNVIDIA RTX A6000, 8.6\\n'\n"


def _dry_run(tmp_path: Path, tools: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tools = {"nvidia-smi": NO_NVIDIA, "vulkaninfo": LAVAPIPE_ONLY, "glslc": "#!/bin/sh\n", **tools}
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    headers = tmp_path / "vk" / "vulkan"
    headers.mkdir(parents=True, exist_ok=True)
    (headers / "vulkan_core.h").write_text(
        "#define VK_HEADER_VERSION 309\n#define VK_EXT_layer_settings 1\n"
    )
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EDGEDESK_", "VULKAN", "CMAKE_CUDA"))
    }
    return subprocess.run(
        [str(ROOT / "scripts" / "install.sh"), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={
            **base,
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "VULKAN_INCLUDE_DIR": str(tmp_path / "vk"),
            **env,
        },
    )


def test_an_nvidia_machine_gets_cuda_for_its_compute_capabilities_only(tmp_path: Path) -> None:
    done = _dry_run(tmp_path, {"nvidia-smi": TWO_NVIDIA, "nvcc": "#!/bin/sh\n"})
    assert done.returncode == 0, done.stderr
    assert "GPU backend: cuda (NVIDIA GPU found: NVIDIA GeForce RTX 4070, 8.9)" in done.stdout
    assert "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=86;89 " in done.stdout
    assert f"-DCMAKE_CUDA_COMPILER={tmp_path}/bin/nvcc" in done.stdout


def test_without_a_cuda_toolkit_it_comes_from_pypi(tmp_path: Path) -> None:
    done = _dry_run(tmp_path, {"nvidia-smi": TWO_NVIDIA}, CUDA_HOME=str(tmp_path / "none"))
    assert "toolkit from PyPI" in done.stdout
    # CUDA 13's packages: nvidia-cuda-nvcc-cu12 holds only ptxas, no nvcc to build with.
    assert "nvidia-cuda-nvcc==13.*" in done.stdout
    assert "-cu12" not in done.stdout
    # No libcuda.so stub on PyPI to link the driver: the library must not need it.
    assert "-DGGML_CUDA_NO_VMM=on" in done.stdout


def test_the_pypi_toolkit_is_named_to_cmake_by_an_absolute_path(tmp_path: Path) -> None:
    # CMake looks a relative CMAKE_CUDA_COMPILER up on PATH as a program name: with the
    # default EDGEDESK_VENV=.venv every PyPI-toolkit build stopped at "not a full path".
    done = _dry_run(
        tmp_path,
        {"nvidia-smi": TWO_NVIDIA},
        CUDA_HOME=str(tmp_path / "none"),
        EDGEDESK_VENV=".venv-relative",
    )
    toolkit = ROOT.resolve() / ".venv-relative" / "cuda-toolkit"
    assert f"-DCMAKE_CUDA_COMPILER={toolkit}/bin/nvcc " in done.stdout
    assert f"-DCUDAToolkit_ROOT={toolkit} " in done.stdout


def test_cuda_without_a_gpu_to_look_at_says_which_architecture_to_name(tmp_path: Path) -> None:
    # CMake's 'native' needs a GPU: without one the build could only fail, after minutes.
    blind = _dry_run(tmp_path, {"nvcc": "#!/bin/sh\n"}, EDGEDESK_GPU="cuda")
    assert "would fall back to the CPU build: no NVIDIA GPU found to build for" in blind.stdout
    assert "CMAKE_CUDA_ARCHITECTURES" in blind.stdout
    named = _dry_run(
        tmp_path, {"nvcc": "#!/bin/sh\n"}, EDGEDESK_GPU="cuda", CMAKE_CUDA_ARCHITECTURES="90"
    )
    assert "would build cuda with CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 " in (
        named.stdout
    )


def test_an_amd_vulkan_gpu_gets_vulkan(tmp_path: Path) -> None:
    done = _dry_run(tmp_path, {"vulkaninfo": RADEON})
    assert "GPU backend: vulkan (Vulkan GPU found: AMD Radeon RX 7600 (RADV NAVI33))" in done.stdout
    assert f"-DGGML_VULKAN=on -DVulkan_INCLUDE_DIR={tmp_path}/vk" in done.stdout


def test_a_software_vulkan_device_is_not_a_gpu(tmp_path: Path) -> None:
    done = _dry_run(tmp_path, {})
    assert "GPU backend: cpu (no NVIDIA GPU" in done.stdout
    assert "would build cpu" in done.stdout


def test_old_vulkan_headers_fall_back_to_the_cpu_with_the_reason(tmp_path: Path) -> None:
    old = tmp_path / "old" / "vulkan"
    old.mkdir(parents=True)
    (old / "vulkan_core.h").write_text("#define VK_HEADER_VERSION 239\n")
    done = _dry_run(tmp_path, {"vulkaninfo": RADEON}, VULKAN_INCLUDE_DIR=str(tmp_path / "old"))
    assert "would fall back to the CPU build: the Vulkan headers" in done.stdout
    assert "(version 239) are too old" in done.stdout


def test_edgedesk_gpu_overrides_and_is_checked(tmp_path: Path) -> None:
    forced = _dry_run(tmp_path, {"nvidia-smi": TWO_NVIDIA}, EDGEDESK_GPU="cpu")
    assert "GPU backend: cpu (EDGEDESK_GPU=cpu)" in forced.stdout
    wrong = _dry_run(tmp_path, {}, EDGEDESK_GPU="rocm")
    assert wrong.returncode == 2
    assert "EDGEDESK_GPU=rocm is not one of cuda, vulkan, metal, cpu" in wrong.stdout


def _probe_python(tmp_path: Path, verdict: str) -> tuple[Path, Path]:
    """A PYTHON that records how it was called and prints ``verdict`` as the probe would."""
    calls = tmp_path / "python-calls"
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\nprintf '{verdict}\\n'\n")
    fake.chmod(0o755)
    return fake, calls


PROBE = ROOT / "desktop" / "engine" / "_hardware" / "amx.py"
TILE_CODE = re.compile(r"tilezero|tilerelease|ldtilecfg|_tile_|immintrin", re.IGNORECASE)
x86_64 = pytest.mark.skipif(os.uname().machine != "x86_64", reason="AMX is x86-64's")


@x86_64
def test_the_installer_leaves_amx_out_where_the_one_probe_says_it_cannot_run(
    tmp_path: Path,
) -> None:
    fake, calls = _probe_python(
        tmp_path, "listed, not usable\\na tile instruction faulted (SIGILL)"
    )
    done = _dry_run(tmp_path, {}, PYTHON=str(fake))
    assert done.returncode == 0, done.stderr
    # The probe doctor runs (desktop/engine/_hardware/amx.py), by its path with the Python given.
    assert calls.read_text().splitlines() == [f"-I {PROBE} --why"]
    assert (
        "note: AMX: listed, not usable (a tile instruction faulted (SIGILL)); "
        "building llama.cpp without AMX" in done.stderr
    )
    assert "CFLAGS=' -mno-amx-tile -mno-amx-int8 -mno-amx-bf16'" in done.stdout


@x86_64
def test_amx_stays_out_of_the_build_where_the_cpu_lacks_it(tmp_path: Path) -> None:
    fake, _ = _probe_python(tmp_path, "absent\\nwhy")
    done = _dry_run(tmp_path, {}, PYTHON=str(fake))
    assert "AMX" not in done.stderr and "CFLAGS" not in done.stdout  # nothing to leave out


@x86_64
def test_llama_cpps_amx_kernels_are_left_out_even_where_the_tiles_run(tmp_path: Path) -> None:
    # They crash reading any prompt of more than one token with a Q4_K_M model on an
    # Intel Xeon KVM guest whose tiles pass the probe (SIGSEGV in ggml_backend_amx_mul_mat).
    fake, _ = _probe_python(tmp_path, "usable\\nLDTILECFG, TILEZERO ran")
    done = _dry_run(tmp_path, {}, PYTHON=str(fake))
    assert "CFLAGS=' -mno-amx-tile -mno-amx-int8 -mno-amx-bf16'" in done.stdout
    assert "without its AMX kernels, which crash on this llama.cpp (EDGEDESK_AMX=1" in (done.stderr)
    asked = _dry_run(tmp_path, {}, PYTHON=str(fake), EDGEDESK_AMX="1")
    assert "CFLAGS" not in asked.stdout
    assert "EDGEDESK_AMX=1: building llama.cpp's AMX kernels" in asked.stderr
    # Asking does not build them where the tiles fault.
    faulting, _ = _probe_python(tmp_path, "listed, not usable\\nSIGILL")
    refused = _dry_run(tmp_path, {}, PYTHON=str(faulting), EDGEDESK_AMX="1")
    assert "CFLAGS=' -mno-amx-tile -mno-amx-int8 -mno-amx-bf16'" in refused.stdout


def test_every_script_that_compiles_llama_cpp_asks_the_same_probe() -> None:
    for script in ("install.sh", "build-llama-server.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "source scripts/amx-check.sh" in text, script
        assert not TILE_CODE.search(text), script  # no probe of its own
    # The test run installs through the installer, never by a pip build of its own.
    tests = (ROOT / "scripts" / "test.sh").read_text()
    assert "./scripts/install.sh" in tests and "pip install" not in tests
    check = (ROOT / "scripts" / "amx-check.sh").read_text()
    assert "desktop/engine/_hardware/amx.py" in check and not TILE_CODE.search(check)


@x86_64
def test_the_llama_server_build_asks_it_too(tmp_path: Path) -> None:
    fake, calls = _probe_python(tmp_path, "listed, not checked\\nno executable memory")
    done = subprocess.run(
        [str(ROOT / "scripts" / "build-llama-server.sh")],
        env={
            **os.environ,
            "PYTHON": str(fake),
            "EDGEDESK_WHEEL_CACHE": str(tmp_path / "cache"),
            "EDGEDESK_LLAMA_SRC": str(tmp_path / "not-a-source"),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert calls.read_text().splitlines() == [f"-I {PROBE} --why"]
    assert "note: AMX: listed, not checked (no executable memory)" in done.stderr
