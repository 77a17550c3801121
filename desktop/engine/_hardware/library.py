"""llama.cpp's shared library failing to load, told as what is missing and what to do.

A CUDA build of llama-cpp-python that links the NVIDIA driver (``libcuda.so.1``) directly
cannot even be imported where that driver is absent: ctypes fails inside ``import
llama_cpp`` with "Failed to load shared library '…/libllama.so': libcuda.so.1: cannot
open shared object file". No CPU library sits beside it in that install, so there is
nothing to fall back to in-process: the honest answer is one line naming the missing
piece and the two ways out (install the driver, or reinstall for the CPU). The CUDA
builds ``scripts/install.sh`` makes with NVIDIA's PyPI toolkit do not link the driver
(``GGML_CUDA_NO_VMM``), so they load without it and run on the CPU with a notice
(``backend.py``); this module is for every other build that cannot load.

Nothing here imports llama_cpp at module level, so the command line can ask
``library_error`` about any exception without loading the library. Every function is
safe from any thread.
"""

from __future__ import annotations

import re

from desktop.base.errors import EngineUnavailable

# llama_cpp/_ctypes_extensions.py's wording (llama-cpp-python 0.3.x).
_LOAD_FAILED = re.compile(r"Failed to load shared library '(?P<path>[^']*)': (?P<reason>.*)", re.S)
_OURS = re.compile(r"llama|ggml|mtmd")  # llama_cpp/lib/ or a LLAMA_CPP_LIB_PATH of ours
_NOT_FOUND = re.compile(r"Shared library with base name '(?P<name>[^']*)' not found")
_DRIVER = ("libcuda.so", "nvcuda.dll")  # the NVIDIA driver's own library
_CUDA_RUNTIME = ("libcudart", "libcublas", "cudart64", "cublas64")  # the toolkit's, in the venv
CPU_REINSTALL = "EDGEDESK_GPU=cpu ./scripts/install.sh"


def _missing_name(reason: str) -> str:
    """The library the loader could not find, as it named it ('libcuda.so.1'), or ''."""
    head = reason.split(":", 1)[0].strip()
    return head if head.startswith("lib") or head.endswith(".dll") else ""


def _explain(path: str, reason: str) -> EngineUnavailable:
    reason = " ".join(reason.split())
    missing = _missing_name(reason)
    if any(name in reason for name in _DRIVER):
        return EngineUnavailable(
            f"llama.cpp cannot start: this llama-cpp-python is a CUDA build and needs the "
            f"NVIDIA driver, but {missing or 'libcuda'} is not on this machine. Install the "
            f"NVIDIA driver (nvidia-smi must list the GPU), or reinstall for the CPU: "
            f"{CPU_REINSTALL}"
        )
    if any(name in reason for name in _CUDA_RUNTIME):
        return EngineUnavailable(
            f"llama.cpp cannot start: this llama-cpp-python is a CUDA build and the CUDA "
            f"runtime it was built with ({missing or reason}) is missing. Reinstall with "
            f"./scripts/install.sh (it brings the runtime), or for the CPU: {CPU_REINSTALL}"
        )
    return EngineUnavailable(
        f"llama.cpp cannot start: its library {path} does not load ({reason}). Reinstall "
        "llama-cpp-python for this machine: ./scripts/install.sh"
    )


def library_error(exc: BaseException) -> EngineUnavailable | None:
    """The clear error for llama.cpp's library not loading, if that is what ``exc`` (or an
    exception it was raised from or during) is; None for any other exception."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, EngineUnavailable):
            return current
        if isinstance(current, OSError | RuntimeError):
            text = str(current)
            failed = _LOAD_FAILED.search(text)
            if failed and _OURS.search(failed.group("path")):
                return _explain(failed.group("path"), failed.group("reason"))
            absent = _NOT_FOUND.search(text)
            if absent and isinstance(current, FileNotFoundError):
                return EngineUnavailable(
                    f"llama.cpp cannot start: llama-cpp-python has no lib{absent.group('name')} "
                    "library (a broken install). Reinstall it: ./scripts/install.sh"
                )
        current = current.__cause__ or current.__context__
    return None


def require_llama_cpp() -> None:
    """Load llama.cpp's library now, or raise ``EngineUnavailable`` saying what to do."""
    try:
        import desktop.engine._llama_cpp  # noqa: F401 - the import (of llama_cpp) is the check
    except (OSError, RuntimeError) as exc:
        problem = library_error(exc)
        if problem is None:
            raise
        raise problem from exc
