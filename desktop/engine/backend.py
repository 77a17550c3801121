"""Which llama.cpp backend this build runs on (CUDA, Metal, Vulkan… or CPU), and why.

A CUDA or Vulkan build started on a machine without the GPU runtime still loads: it
simply finds no device and runs on the CPU. We say so plainly instead of leaving the
user to wonder why generation is slow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import llama_cpp

# llama_print_system_info() prints "<Backend> : FEATURE = 1 | ..." for each backend
# compiled in; the names are ggml's backend registry names.
_GPU_BACKENDS = {"CUDA": "cuda", "Metal": "metal", "MTL": "metal", "Vulkan": "vulkan",
                 "ROCm": "rocm", "HIP": "rocm", "SYCL": "sycl"}
_BACKEND_NAME = re.compile(r"(?:^|\|)\s*([A-Za-z][\w-]*)\s*:")


@dataclass(frozen=True)
class BackendInfo:
    """The backend in use, the GPU backend compiled in (if any), and a notice to show."""

    name: str  # 'cuda' | 'metal' | 'vulkan' | 'rocm' | 'sycl' | 'cpu'
    compiled_gpu: str | None
    gpu_offload: bool

    @property
    def notice(self) -> str | None:
        """One line for the user when a GPU build fell back to the CPU; None otherwise."""
        if self.compiled_gpu and not self.gpu_offload:
            return (f"notice: this is a {self.compiled_gpu.upper()} build but no usable GPU "
                    "or GPU runtime was found; running on the CPU (slower). Install the "
                    "GPU driver, or use the CPU build.")
        return None

    def describe(self) -> str:
        """Short text such as 'cuda (GPU offload)' or 'cpu'."""
        return f"{self.name} (GPU offload)" if self.gpu_offload else self.name


def parse_backend(system_info: str, gpu_offload: bool) -> BackendInfo:
    """Derive the backend from llama.cpp's system-info text and its GPU offload flag."""
    compiled = None
    for match in _BACKEND_NAME.finditer(system_info):
        compiled = _GPU_BACKENDS.get(match.group(1))
        if compiled:
            break
    name = compiled if (compiled and gpu_offload) else ("gpu" if gpu_offload else "cpu")
    return BackendInfo(name=name, compiled_gpu=compiled, gpu_offload=gpu_offload)


def backend_info() -> BackendInfo:
    """Ask the loaded llama.cpp library which backend it will use."""
    raw = llama_cpp.llama_print_system_info()
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return parse_backend(text, bool(llama_cpp.llama_supports_gpu_offload()))
