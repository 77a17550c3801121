"""The backend report: what `edgedesk --version` tells a user about CPU/GPU."""

from __future__ import annotations

import subprocess
import sys

from desktop.engine._hardware.backend import backend_info, parse_backend

CPU_ONLY = "CPU : SSE3 = 1 | AVX2 = 1 | OPENMP = 1 | REPACK = 1 | "
CUDA = "CUDA : ARCHS = 890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | " + CPU_ONLY
METAL = "Metal : EMBED_LIBRARY = 1 | CPU : NEON = 1 | ARM_FMA = 1 | ACCELERATE = 1 | "
VULKAN = "Vulkan : COOPMAT = 1 | " + CPU_ONLY


def test_gpu_builds_with_a_device_name_their_backend() -> None:
    assert parse_backend(CUDA, True).describe() == "cuda (GPU offload)"
    assert parse_backend(METAL, True).name == "metal"
    assert parse_backend(VULKAN, True).name == "vulkan"
    assert parse_backend(CUDA, True).notice is None


def test_gpu_build_without_runtime_falls_back_to_cpu_with_a_notice() -> None:
    info = parse_backend(CUDA, False)
    assert info.name == "cpu"
    assert info.notice is not None and "CUDA" in info.notice and "CPU" in info.notice


def test_cpu_build_is_cpu_without_a_notice() -> None:
    info = parse_backend(CPU_ONLY, False)
    assert (info.name, info.compiled_gpu, info.notice) == ("cpu", None, None)


def test_version_reports_the_backend_of_this_build() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("edgedesk ")
    assert lines[1] == f"backend: {backend_info().describe()}"


def test_what_llama_cpp_prints_as_its_backends_start_never_reaches_the_console() -> None:
    # A CUDA build without the driver: llama.cpp's "ggml_cuda_init: failed..." came
    # first, above EdgeDesk's own sentence. It goes through llama-cpp-python's log
    # callback (the real one here) at error level, as llama.cpp's does.
    code = """if True:
        import llama_cpp
        from llama_cpp import _logger
        real = llama_cpp.llama_backend_init
        def noisy_start():
            _logger.llama_log_callback(3, b"ggml_cuda_init: failed to initialize CUDA\\n", None)
            real()
        llama_cpp.llama_backend_init = noisy_start
        from desktop.engine._hardware.backend import backend_info
        print(backend_info().describe())
        _logger.llama_log_callback(3, b"a later error\\n", None)
    """
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == backend_info().describe()
    assert "ggml_cuda_init" not in done.stderr
    assert "a later error" in done.stderr  # llama.cpp's errors still print afterwards
