"""The compute devices llama.cpp sees, read from ggml's own backend registry.

llama-cpp-python 0.3.36 does not bind ggml's backend/device API, so we bind the few
functions we need with ctypes from the ``libggml``/``libggml-base`` libraries it ships
(they are already loaded by ``libllama``; loading them again returns the same handles).
The memory a device reports here is what llama.cpp itself will allocate against — CUDA's
``cudaMemGetInfo``, Vulkan's heap budget, Metal's recommended working set — so GPU fit
and automatic layers work for every backend, not only where NVML exists.

Every function is a plain blocking call, safe from any thread (the registry is built
once, under ggml's own lock, on first use).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.engine._llama_cpp import ctypes_ext, llama_lib
from desktop.engine._native import start_backends

# enum ggml_backend_dev_type, in ggml-backend.h order.
DEVICE_KINDS = ("cpu", "gpu", "igpu", "accel", "meta")
# ggml backend registry names -> our backend ids. HIP builds register as "ROCm".
GPU_BACKENDS = {
    "CUDA": "cuda",
    "ROCm": "rocm",
    "HIP": "rocm",
    "Vulkan": "vulkan",
    "Metal": "metal",
    "MTL": "metal",
    "SYCL": "sycl",
    "CANN": "cann",
    "OpenCL": "opencl",
}


@dataclass(frozen=True)
class Device:
    """One device in ggml's registry: its backend, kind and memory (bytes)."""

    backend: str  # ggml registry name, e.g. "Vulkan", "CUDA", "CPU"
    name: str  # e.g. "Vulkan0", "CUDA0", "CPU"
    description: str  # e.g. "NVIDIA GeForce RTX 4070", "llvmpipe (LLVM 15.0.6, 256 bits)"
    kind: str  # one of DEVICE_KINDS
    free_bytes: int
    total_bytes: int

    @property
    def is_gpu(self) -> bool:
        """Whether llama.cpp offloads layers to this device (a GPU or an integrated GPU)."""
        return self.kind in ("gpu", "igpu")


class GgmlDeviceApi:
    """ctypes bindings of ggml's backend registry and device functions."""

    def __init__(self, libraries: Sequence[ctypes.CDLL]) -> None:
        def bind(name: str, restype: Any, argtypes: list[Any]) -> Callable[..., Any]:
            for lib in libraries:
                try:
                    function = getattr(lib, name)
                except AttributeError:
                    continue
                function.restype, function.argtypes = restype, argtypes
                return function  # type: ignore[no-any-return]
            raise OSError(f"{name} is not exported by the ggml libraries")

        ptr, size = ctypes.c_void_p, ctypes.c_size_t
        self.reg_count = bind("ggml_backend_reg_count", size, [])
        self.reg_get = bind("ggml_backend_reg_get", ptr, [size])
        self.reg_name = bind("ggml_backend_reg_name", ctypes.c_char_p, [ptr])
        self.dev_count = bind("ggml_backend_dev_count", size, [])
        self.dev_get = bind("ggml_backend_dev_get", ptr, [size])
        self.dev_name = bind("ggml_backend_dev_name", ctypes.c_char_p, [ptr])
        self.dev_description = bind("ggml_backend_dev_description", ctypes.c_char_p, [ptr])
        self.dev_memory = bind(
            "ggml_backend_dev_memory", None, [ptr, ctypes.POINTER(size), ctypes.POINTER(size)]
        )
        self.dev_type = bind("ggml_backend_dev_type", ctypes.c_int, [ptr])
        self.dev_backend_reg = bind("ggml_backend_dev_backend_reg", ptr, [ptr])

    def backends(self) -> list[str]:
        """The registry names of the backends compiled in (e.g. ["Vulkan", "CPU"])."""
        return [_text(self.reg_name(self.reg_get(i))) for i in range(self.reg_count())]

    def devices(self) -> list[Device]:
        """Every device in the registry, in llama.cpp's order, with its memory now."""
        found = []
        for index in range(self.dev_count()):
            dev = self.dev_get(index)
            free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
            self.dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
            kind = self.dev_type(dev)
            found.append(
                Device(
                    backend=_text(self.reg_name(self.dev_backend_reg(dev))),
                    name=_text(self.dev_name(dev)),
                    description=_text(self.dev_description(dev)),
                    kind=DEVICE_KINDS[kind] if 0 <= kind < len(DEVICE_KINDS) else f"type{kind}",
                    free_bytes=int(free.value),
                    total_bytes=int(total.value),
                )
            )
        return found


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", "replace") if raw else ""


@functools.cache
def ggml_api() -> GgmlDeviceApi:
    """The bindings for the llama.cpp library llama-cpp-python loaded (OSError if absent)."""
    base = llama_lib._base_path
    libraries: list[ctypes.CDLL] = [llama_lib._lib]  # on Linux/macOS its deps resolve too
    for name in ("ggml", "ggml-base"):  # Windows: GetProcAddress searches one DLL only
        try:
            libraries.append(ctypes_ext.load_shared_library(name, base))
        except (OSError, RuntimeError, FileNotFoundError):
            continue
    start_backends()  # registers the backends before we ask
    return GgmlDeviceApi(libraries)


def list_devices() -> list[Device]:
    """The devices llama.cpp sees now; [] if this llama.cpp has no device API."""
    try:
        return ggml_api().devices()
    except OSError:
        return []


def list_backends() -> list[str]:
    """The backend registry names compiled in; [] if this llama.cpp has no registry API."""
    try:
        return ggml_api().backends()
    except OSError:
        return []


def gpu_devices() -> list[Device]:
    """The devices llama.cpp can offload layers to (GPUs and integrated GPUs)."""
    return [d for d in list_devices() if d.is_gpu]
