"""Whether this CPU runs Intel AMX: the one probe for the installer, the build scripts and
``edgedesk doctor``.

Some virtual machines list ``amx_tile`` in /proc/cpuinfo yet fault on tile instructions,
and a llama.cpp built with AMX then dies with SIGILL at its first decode. Only running
tile instructions tells: a child process asks Linux for the tile state
(ARCH_REQ_XCOMP_PERM, XTILEDATA), loads a tile configuration (LDTILECFG), zeroes three
tiles (TILEZERO), multiplies them (TDPBSSD, AMX-INT8: what llama.cpp's kernels run),
stores the result (TILESTORED) and releases the tiles (TILERELEASE). Any fault kills only
the child. TILERELEASE alone proves nothing (it runs where the others fault), and
TILEZERO before LDTILECFG faults on every CPU.

Standard library only, so that ``scripts/amx-check.sh`` runs this file by its path with
the system Python before EdgeDesk is installed: it prints one of ``VERDICTS`` (as
``edgedesk doctor`` shows it) and, with ``--why``, a second line saying what the probe
saw. Plain blocking calls, safe from any thread.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ABSENT = "absent"
USABLE = "usable"
NOT_USABLE = "listed, not usable"
NOT_CHECKED = "listed, not checked"
VERDICTS = (ABSENT, USABLE, NOT_USABLE, NOT_CHECKED)

_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18
_SYS_ARCH_PRCTL = 158  # x86-64
# rdi = 64-byte tile configuration, rsi = 1 KiB output, rdx = its row stride (64).
_TILE_CODE = bytes.fromhex(
    "c4e2784907"  # ldtilecfg [rdi]
    "c4e27b49c0"  # tilezero tmm0
    "c4e27b49c8"  # tilezero tmm1
    "c4e27b49d0"  # tilezero tmm2
    "c4e26b5ec1"  # tdpbssd tmm0, tmm1, tmm2
    "c4e27a4b0416"  # tilestored [rsi + rdx], tmm0
    "c4e27849c0"  # tilerelease
    "c3"  # ret
)
_CHILD_FLAG = "--run-tiles"
_ROWS, _ROW_BYTES = 16, 64
# Exit codes of the child; a fault is a negative return code (the signal).
_RAN, _REFUSED, _WRONG, _NO_EXEC = 0, 3, 4, 5


def run_tiles(ask_linux: bool = True) -> int:
    """In a child process only: run the tile code once; one of the exit codes above, or
    the process dies of the fault. ``ask_linux=False`` skips the tile-state request (a
    test's way to reach the fault on a CPU without AMX)."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    if ask_linux and libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA):
        return _REFUSED
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except OSError:  # a hardened kernel forbids writable code
        return _NO_EXEC
    page.write(_TILE_CODE)
    config = (ctypes.c_uint8 * 64)()
    config[0] = 1  # palette 1
    for tile in range(3):  # tmm0..2: 16 rows of 64 bytes (int32 16x16 += int8 16x64 . 64x16)
        config[16 + 2 * tile] = _ROW_BYTES
        config[48 + tile] = _ROWS
    out = (ctypes.c_uint8 * (_ROWS * _ROW_BYTES))(*([0xFF] * (_ROWS * _ROW_BYTES)))
    function = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        ctypes.addressof(ctypes.c_char.from_buffer(page))
    )
    function(ctypes.addressof(config), ctypes.addressof(out), _ROW_BYTES)
    return _RAN if not any(out) else _WRONG  # zero times zero, stored over 0xFF


def outcome(returncode: int) -> tuple[bool | None, str]:
    """What the child's exit status says: (AMX ran, why) (None: it could not be tried)."""
    if returncode == _RAN:
        return True, "LDTILECFG, TILEZERO, TDPBSSD, TILESTORED, TILERELEASE ran"
    if returncode == _REFUSED:
        return False, "Linux refused the tile state (ARCH_REQ_XCOMP_PERM)"
    if returncode == _WRONG:
        return False, "the tile instructions ran but stored a wrong result"
    if returncode == _NO_EXEC:
        return None, "this system forbids the probe's executable memory"
    if returncode < 0:
        import signal

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return False, f"a tile instruction faulted ({name})"
    return None, f"the probe exited with {returncode}"


def probe(python: str | None = None, timeout_s: float = 30.0) -> tuple[bool | None, str]:
    """Run the tile instructions in a child process: (AMX ran, why); None: not tried."""
    if getattr(sys, "frozen", False) or sys.platform != "linux":
        return None, "no interpreter to run the probe in"
    try:
        done = subprocess.run(  # noqa: S603 - this file, run by this Python
            [python or sys.executable, str(Path(__file__).resolve()), _CHILD_FLAG],
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"the probe could not run: {exc}"
    return outcome(done.returncode)


def listed(cpuinfo: str) -> bool:
    """Whether the first processor's flags in a /proc/cpuinfo text list AMX tiles."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return "amx_tile" in value.split()
    return False


def verdict(
    cpuinfo: str | None = None,
    run: Callable[[], tuple[bool | None, str]] = probe,
) -> tuple[str, str]:
    """(one of VERDICTS, why): tiles are tried only where the CPU lists them."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    if not listed(cpuinfo):
        return ABSENT, "the CPU does not list amx_tile"
    ran, why = run()
    return {True: USABLE, False: NOT_USABLE, None: NOT_CHECKED}[ran], why


def _main(argv: list[str]) -> int:
    if argv == [_CHILD_FLAG]:
        return run_tiles()
    said, why = verdict()
    sys.stdout.write(f"{said}\n{why}\n" if "--why" in argv else f"{said}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
