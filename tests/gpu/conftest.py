"""The opt-in GPU tests: they need a llama-cpp-python built with a GPU backend.

They run only when asked for (``pytest -m gpu tests/gpu``), in a virtual environment
made by ``scripts/gpu-test.sh`` (a Vulkan build on Mesa's software device, lavapipe, on a
machine without a GPU; the wheel is cached, so reruns take seconds). CI does not run
them: the Vulkan build alone takes minutes (see .ci/run).
"""

from __future__ import annotations

import pytest

from desktop.engine._hardware.backend import BackendInfo, backend_info


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the gpu tests unless ``-m gpu`` selects them."""
    if "gpu" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(
        reason="needs a GPU build of llama-cpp-python; run: "
        "scripts/gpu-test.sh (pytest -m gpu tests/gpu)"
    )
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def gpu_backend() -> BackendInfo:
    """This build's backend; fails (it was asked for) when it offloads to no device."""
    info = backend_info()
    if not info.gpu_offload:
        pytest.fail(
            f"llama-cpp-python here offloads to no GPU ({info.describe()}): "
            f"{info.notice or 'CPU-only build'}. Build one with scripts/gpu-test.sh; "
            "for lavapipe set GGML_VK_VISIBLE_DEVICES=0."
        )
    return info
