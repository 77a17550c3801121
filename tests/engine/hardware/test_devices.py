"""The devices llama.cpp sees, read through our ctypes bindings of ggml's registry."""

from __future__ import annotations

import pytest

from desktop.catalog._fit import GPU, detect_hardware
from desktop.engine._hardware.backend import BackendInfo, parse_backend, why_no_gpu
from desktop.engine._hardware.devices import Device, list_backends, list_devices

pytestmark = pytest.mark.fast

GIB = 1024**3
LAVAPIPE = Device(
    "Vulkan", "Vulkan0", "llvmpipe (LLVM 15.0.6, 256 bits)", "igpu", 30 * GIB, 31 * GIB
)
CPU_DEV = Device("CPU", "CPU", "AMD EPYC", "cpu", 30 * GIB, 31 * GIB)


def test_this_build_lists_the_cpu_backend_and_its_memory() -> None:
    assert "CPU" in list_backends()
    cpu = [d for d in list_devices() if d.kind == "cpu"]
    assert cpu, "ggml's registry lists no CPU device"
    assert cpu[0].backend == "CPU" and not cpu[0].is_gpu
    assert 0 < cpu[0].free_bytes <= cpu[0].total_bytes


def test_a_vulkan_build_with_a_device_is_named_vulkan_not_gpu() -> None:
    # The registry names the backend even where the system-info text does not.
    info = parse_backend(
        "CPU : AVX2 = 1 | ", True, registered=["Vulkan", "CPU"], devices=[LAVAPIPE, CPU_DEV]
    )
    assert info.describe() == "vulkan (GPU offload)"
    assert info.gpu_devices == (LAVAPIPE,) and info.notice is None


def test_a_vulkan_build_without_a_device_says_why_and_what_to_do() -> None:
    info = parse_backend("", False, registered=["Vulkan", "CPU"], devices=[CPU_DEV])
    assert info.describe() == "cpu"
    assert info.notice is not None and "GGML_VK_VISIBLE_DEVICES" in info.notice
    chosen = why_no_gpu(info, {"GGML_VK_VISIBLE_DEVICES": "3"})
    assert "GGML_VK_VISIBLE_DEVICES=3" in chosen


def test_a_cpu_only_build_points_at_the_installer() -> None:
    info = BackendInfo(name="cpu", compiled_gpu=None, gpu_offload=False)
    assert "scripts/install.sh" in why_no_gpu(info, {})
    assert why_no_gpu(BackendInfo("cuda", "cuda", True), {}) == ""


def test_gpu_memory_comes_from_the_backend_probe_for_any_vendor() -> None:
    radeon = GPU("AMD Radeon RX 7600", 8 * GIB, 7 * GIB, backend="vulkan")
    hardware = detect_hardware(gpu_probe=lambda: [radeon])
    assert hardware.gpus == (radeon,) and hardware.vram_free_bytes == 7 * GIB
    assert "AMD Radeon RX 7600 7.0 GiB free of 8.0 GiB" in hardware.describe()


def test_a_failing_probe_does_not_stop_the_app() -> None:
    def broken() -> list[GPU]:
        raise RuntimeError("driver crashed")

    assert detect_hardware(gpu_probe=broken).ram_total_bytes > 0
