"""Mixture-of-experts weights kept in RAM by name: llama.cpp's tensor buffer-type overrides.

llama-cpp-python 0.3.36 leaves ``llama_model_params.tensor_buft_overrides`` unused (a
bare pointer in its ctypes struct): this builds the NULL-terminated C array of
``llama_model_tensor_buft_override {const char *pattern; ggml_backend_buffer_type_t
buft}`` that llama-server's ``--cpu-moe`` / ``--n-cpu-moe N`` build (common/arg.cpp),
pointing the routed expert tensors of the chosen layers at the CPU's buffer type. For
that type llama.cpp still picks its CPU "extra" buffers (the repack copy) where they
apply, as it does for any weight left in RAM.

It also says which weight types this llama.cpp build repacks on this CPU (ggml-cpu's
``ggml_repack_get_optimal_repack_type``), so the fit can count that copy.

Plain blocking calls, safe from any thread; an ``ExpertOverrides`` must outlive the
model loaded with it (llama.cpp keeps the pointers).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

from desktop.engine._llama_cpp import llama_lib

# llama-server's pattern for one layer's routed experts (LLM_FFN_EXPS_REGEX); the shared
# experts (``ffn_*_shexp``) and the router (``ffn_gate_inp``) do not match.
EXPERTS_PATTERN = r"\.ffn_(up|down|gate)_exps"
CPU_DEVICE = 0  # enum ggml_backend_dev_type: GGML_BACKEND_DEVICE_TYPE_CPU


class TensorBuftOverride(ctypes.Structure):
    """``struct llama_model_tensor_buft_override`` (llama.h)."""

    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


def expert_pattern(layers: int) -> str | None:
    """The regex naming the routed experts of the first ``layers`` layers (None: none).

    llama-server's ``--n-cpu-moe N`` adds one override per layer; llama.cpp compiles
    every override's regex again for every tensor, so one alternation does the same
    with one regex (``blk\\.(0|1|2)\\.ffn_(up|down|gate)_exps``).
    """
    if layers <= 0:
        return None
    blocks = "|".join(str(index) for index in range(layers))
    return rf"^blk\.({blocks}){EXPERTS_PATTERN}"


def _function(name: str, restype: Any, argtypes: list[Any]) -> Any:
    function = getattr(llama_lib._lib, name)  # libllama's handle resolves its ggml deps
    function.restype, function.argtypes = restype, argtypes
    return function


@functools.cache
def cpu_buffer_type() -> int:
    """The CPU device's buffer type (``ggml_backend_cpu_buffer_type()``), through
    ggml's device API so it is the pointer llama.cpp compares overrides with."""
    by_type = _function("ggml_backend_dev_by_type", ctypes.c_void_p, [ctypes.c_int])
    buffer_type = _function("ggml_backend_dev_buffer_type", ctypes.c_void_p, [ctypes.c_void_p])
    device = by_type(CPU_DEVICE)
    if not device:
        raise OSError("llama.cpp has no CPU device")
    buft = buffer_type(device)
    if not buft:
        raise OSError("llama.cpp's CPU device has no buffer type")
    return int(buft)


class ExpertOverrides:
    """The C array putting the routed experts of the first ``layers`` layers in RAM.

    ``pointer`` goes into ``llama_model_params.tensor_buft_overrides``; this object keeps
    the pattern strings and the array alive, so it must live as long as the model.
    """

    def __init__(self, layers: int) -> None:
        pattern = expert_pattern(layers)
        self.patterns = [pattern] if pattern is not None else []
        self._texts = [text.encode() for text in self.patterns]
        buft = cpu_buffer_type() if self._texts else 0
        self._array = (TensorBuftOverride * (len(self._texts) + 1))()
        for slot, text in zip(self._array, self._texts, strict=False):
            slot.pattern = text
            slot.buft = buft
        # the last entry stays {NULL, NULL}: llama.cpp's end marker

    @property
    def pointer(self) -> int | None:
        """The array's address, or None when nothing is overridden."""
        return ctypes.addressof(self._array) if self._texts else None


@functools.cache
def repack_types() -> frozenset[str]:
    """Weight types this llama.cpp build copies into its CPU repack buffer on this CPU.

    ggml-cpu's ``ggml_repack_get_optimal_repack_type`` in the bundled llama.cpp: with
    AVX2, Q4_0, Q4_K, IQ4_NL and MXFP4 (AVX-512 adds Q2_K); on ARM with dot-product
    instructions also Q5_K, Q6_K and Q8_0. Empty if this build cannot say.
    """
    try:
        has = {
            name: bool(_function(f"ggml_cpu_has_{name}", ctypes.c_int, [])())
            for name in ("avx2", "avx512", "neon", "dotprod", "matmul_int8")
        }
    except AttributeError:
        return frozenset()
    found: set[str] = set()
    if has["avx2"]:
        found |= {"Q4_0", "Q4_K", "IQ4_NL", "MXFP4"}
    if has["avx512"]:
        found.add("Q2_K")
    if has["neon"] and (has["dotprod"] or has["matmul_int8"]):
        found |= {"Q4_0", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "MXFP4", "Q8_0"}
    return frozenset(found)
