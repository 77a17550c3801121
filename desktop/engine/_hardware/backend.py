"""Which llama.cpp backend this build runs on (CUDA, Metal, Vulkan… or CPU), and why.

A CUDA or Vulkan build started on a machine without the GPU runtime still loads: it
simply finds no device and runs on the CPU. We say so plainly instead of leaving the
user to wonder why generation is slow. The backends compiled in come from ggml's own
registry (see ``devices.py``); the system-info text is the fallback for a library
without that API.

``backend_info`` is a plain blocking call, safe from any thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop.engine._hardware.devices import GPU_BACKENDS, Device, list_backends, list_devices
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._native import start_backends

_BACKEND_NAME = re.compile(r"(?:^|\|)\s*([A-Za-z][\w-]*)\s*:")


@dataclass(frozen=True)
class BackendInfo:
    """The backend in use, the GPU backend compiled in (if any), and a notice to show."""

    name: str  # 'cuda' | 'metal' | 'vulkan' | 'rocm' | 'sycl' | ... | 'cpu'
    compiled_gpu: str | None
    gpu_offload: bool
    devices: tuple[Device, ...] = field(default=())

    @property
    def gpu_devices(self) -> tuple[Device, ...]:
        """The devices layers can be offloaded to."""
        return tuple(d for d in self.devices if d.is_gpu)

    @property
    def notice(self) -> str | None:
        """One line for the user when a GPU build fell back to the CPU; None otherwise."""
        if self.compiled_gpu and not self.gpu_offload:
            return (
                f"notice: this is a {self.compiled_gpu.upper()} build but no usable GPU "
                "or GPU runtime was found; running on the CPU (slower). "
                f"{why_no_gpu(self)}"
            )
        return None

    def describe(self) -> str:
        """Short text such as 'vulkan (GPU offload)' or 'cpu'."""
        return f"{self.name} (GPU offload)" if self.gpu_offload else self.name


def why_no_gpu(info: BackendInfo, environ: dict[str, str] | None = None) -> str:
    """A sentence saying why no GPU is used, and what to do; '' when one is used."""
    env = os.environ if environ is None else environ
    if info.gpu_offload:
        return ""
    if not info.compiled_gpu:
        return (
            "This llama-cpp-python was built for the CPU only. Reinstall with "
            "./scripts/install.sh (it detects the GPU; EDGEDESK_GPU=cuda|vulkan|metal "
            "forces one) to use a GPU."
        )
    if info.compiled_gpu == "vulkan":
        hint = (
            "Install the GPU's Vulkan driver (Mesa RADV/ANV, NVIDIA, AMD). Software "
            "devices such as llvmpipe/lavapipe are skipped unless "
            "GGML_VK_VISIBLE_DEVICES selects them."
        )
        if "GGML_VK_VISIBLE_DEVICES" in env:
            hint = (
                f"GGML_VK_VISIBLE_DEVICES={env['GGML_VK_VISIBLE_DEVICES']} selected no "
                "usable device."
            )
        return f"The Vulkan backend found no device. {hint}"
    if info.compiled_gpu == "cuda":
        return (
            "The CUDA backend found no device: install or update the NVIDIA driver "
            "(nvidia-smi must list the GPU), or check CUDA_VISIBLE_DEVICES."
        )
    if info.compiled_gpu == "metal":
        return "The Metal backend found no device (Apple Silicon or a Metal GPU is needed)."
    return f"The {info.compiled_gpu} backend found no device: check its driver/runtime."


def parse_backend(
    system_info: str,
    gpu_offload: bool,
    registered: Sequence[str] = (),
    devices: Sequence[Device] = (),
) -> BackendInfo:
    """Derive the backend from ggml's registry names, else llama.cpp's system-info text."""
    names = list(registered) or [m.group(1) for m in _BACKEND_NAME.finditer(system_info)]
    compiled = next((GPU_BACKENDS[n] for n in names if n in GPU_BACKENDS), None)
    used = next((GPU_BACKENDS.get(d.backend) for d in devices if d.is_gpu), None)
    name = (used or compiled or "gpu") if gpu_offload else "cpu"
    return BackendInfo(
        name=name, compiled_gpu=compiled, gpu_offload=gpu_offload, devices=tuple(devices)
    )


def backend_info() -> BackendInfo:
    """Ask the loaded llama.cpp library which backend it will use, and on which devices."""
    start_backends()
    raw = llama_cpp.llama_print_system_info()
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return parse_backend(
        text,
        bool(llama_cpp.llama_supports_gpu_offload()),
        registered=list_backends(),
        devices=list_devices(),
    )
