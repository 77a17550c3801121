"""The CPU features llama.cpp was compiled for, against those of this machine.

A llama.cpp built for instructions the CPU lacks (AVX-512 on an AVX2-only machine, AMX
where the CPU lists it but cannot run it) dies with SIGILL at its first decode; ``edgedesk
doctor`` shows both sides so that is found before it happens. The compiled side is
llama.cpp's own ``llama_print_system_info()``; the machine's is /proc/cpuinfo, and AMX
is tried for real (in a child process: a fault must not take the caller down).

Plain blocking calls, safe from any thread.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import llama_cpp

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

# Ask Linux for the AMX tile state (ARCH_REQ_XCOMP_PERM, XTILEDATA), then run TILERELEASE
# (C4 E2 78 49 C0) and return: exit 0 only where AMX really runs.
_AMX_PROBE = """
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(158, 0x1023, 18) != 0:
    sys.exit(2)
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(bytes([0xC4, 0xE2, 0x78, 0x49, 0xC0, 0xC3]))
ctypes.CFUNCTYPE(None)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
"""


@dataclass(frozen=True)
class CpuFeatures:
    """Per feature: whether llama.cpp was built for it, and whether this CPU has it."""

    built: dict[str, bool]
    machine: dict[str, bool]
    amx: str  # "absent" | "usable" | "listed, not usable" | "listed, not checked"

    @property
    def missing(self) -> list[str]:
        """Features llama.cpp was built for that this CPU cannot run (each one: SIGILL)."""
        gone = [f for f, on in self.built.items() if on and not self.machine.get(f, False)]
        if self.built.get("AMX_INT8") and self.amx != "usable" and "AMX_INT8" not in gone:
            gone.append("AMX_INT8")
        return gone


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


def amx_probe() -> bool | None:
    """Whether AMX instructions run in a child process (None: the check cannot run here)."""
    if getattr(sys, "frozen", False) or sys.platform != "linux":
        return None  # no interpreter to start the child with
    try:
        done = subprocess.run(  # noqa: S603
            [sys.executable, "-c", _AMX_PROBE],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode == 0


def cpu_features(
    system_info: str | None = None,
    cpuinfo: str | None = None,
    probe: Callable[[], bool | None] = amx_probe,
) -> CpuFeatures:
    """llama.cpp's compiled CPU features against this machine's (read now)."""
    if system_info is None:
        raw = llama_cpp.llama_print_system_info()
        system_info = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    flags = machine_flags(cpuinfo)
    machine = machine_features(flags)
    amx = "absent"
    if "amx_tile" in flags:
        works = probe()
        amx = {True: "usable", False: "listed, not usable", None: "listed, not checked"}[works]
        machine["AMX_INT8"] = bool(works) and machine["AMX_INT8"]
    return CpuFeatures(built=built_features(system_info), machine=machine, amx=amx)


def as_report(features: CpuFeatures) -> Mapping[str, object]:
    """The comparison as plain data for ``edgedesk doctor --json``."""
    return {
        "built": features.built,
        "machine": features.machine,
        "amx": features.amx,
        "missing": features.missing,
    }
