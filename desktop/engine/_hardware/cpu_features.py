"""The CPU features llama.cpp was compiled for, against those of this machine.

A llama.cpp built for instructions the CPU lacks (AVX-512 on an AVX2-only machine, AMX
where the CPU lists it but cannot run it) dies with SIGILL at its first decode; ``edgedesk
doctor`` shows both sides so that is found before it happens. The compiled side is
llama.cpp's own ``llama_print_system_info()``; the machine's is /proc/cpuinfo, and AMX
is tried for real by ``desktop.engine._hardware.amx``, the probe the installer and the build
scripts run too (in a child process: a fault must not take the caller down).

Plain blocking calls, safe from any thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.engine._hardware import amx
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._native import start_backends

# Shown in this order: name in llama.cpp's system info -> the /proc/cpuinfo flag(s).
FEATURES: dict[str, tuple[str, ...]] = {
    "AVX": ("avx",),
    "AVX2": ("avx2",),
    "FMA": ("fma",),
    "F16C": ("f16c",),
    "AVX_VNNI": ("avx_vnni",),
    "AVX512": ("avx512f",),
    "AVX512_VBMI": ("avx512vbmi",),
    "AVX512_VNNI": ("avx512_vnni",),
    "AVX512_BF16": ("avx512_bf16",),
    "AMX_INT8": ("amx_int8", "amx_tile"),
}
_ENTRY = re.compile(r"([A-Z][A-Z0-9_]*)\s*=\s*(\d+)")


@dataclass(frozen=True)
class CpuFeatures:
    """Per feature: whether llama.cpp was built for it, and whether this CPU has it."""

    built: dict[str, bool]
    machine: dict[str, bool]
    amx: str  # one of desktop.engine._hardware.amx.VERDICTS
    amx_probe: str = ""  # what the probe saw, in a few words

    @property
    def missing(self) -> list[str]:
        """Features llama.cpp was built for that this CPU cannot run (each one: SIGILL)."""
        gone = [f for f, on in self.built.items() if on and not self.machine.get(f, False)]
        if self.built.get("AMX_INT8") and self.amx != amx.USABLE and "AMX_INT8" not in gone:
            gone.append("AMX_INT8")
        return gone

    @property
    def amx_kernels(self) -> str:
        """Where the tiles run, whether llama.cpp's AMX kernels are "built in" (asked for
        with EDGEDESK_AMX=1) or "left out" (scripts/amx-check.sh: they crash on this
        llama.cpp); "" where the tiles do not run."""
        if self.amx != amx.USABLE:
            return ""
        return "built in" if self.built.get("AMX_INT8") else "left out"


def built_features(system_info: str) -> dict[str, bool]:
    """The features llama.cpp's system-info text says its CPU backend was built for."""
    cpu = next((part for part in system_info.split("CPU :")[1:]), system_info)
    found = {name: value != "0" for name, value in _ENTRY.findall(cpu)}
    return {name: found.get(name, False) for name in FEATURES}


def machine_flags(cpuinfo: str) -> set[str]:
    """The flags of the first processor in a /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def machine_features(flags: Iterable[str]) -> dict[str, bool]:
    """Each feature llama.cpp knows, by this CPU's flags."""
    have = set(flags)
    return {name: all(flag in have for flag in needs) for name, needs in FEATURES.items()}


def cpu_features(
    system_info: str | None = None,
    cpuinfo: str | None = None,
    probe: Callable[[], tuple[bool | None, str]] = amx.probe,
) -> CpuFeatures:
    """llama.cpp's compiled CPU features against this machine's (read now)."""
    if system_info is None:
        start_backends()
        raw = llama_cpp.llama_print_system_info()
        system_info = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    flags = machine_flags(cpuinfo)
    machine = machine_features(flags)
    verdict, why = amx.verdict(cpuinfo, probe)
    machine["AMX_INT8"] = verdict == amx.USABLE and machine["AMX_INT8"]
    return CpuFeatures(
        built=built_features(system_info), machine=machine, amx=verdict, amx_probe=why
    )


def as_report(features: CpuFeatures) -> Mapping[str, object]:
    """The comparison as plain data for ``edgedesk doctor --json``."""
    return {
        "built": features.built,
        "machine": features.machine,
        "amx": features.amx,
        "amx_probe": features.amx_probe,
        "missing": features.missing,
        "amx_kernels": features.amx_kernels,
    }
