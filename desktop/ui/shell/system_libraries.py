"""Before Qt starts on Linux/X11: are the system libraries its xcb plugin loads installed?

Without them (a fresh Debian desktop lacks ``libxcb-cursor0``) Qt prints a paragraph
about platform plugins and aborts; EdgeDesk says in one line which package to install.
The soname -> package table is desktop/data/linux_window_libraries.json, the same list
the .deb's Depends and the .rpm's Requires are made from. Called on the GUI thread
before the QApplication exists; imports nothing from Qt.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

TABLE = Path(__file__).resolve().parents[2] / "data" / "linux_window_libraries.json"


def uses_xcb(environ: Mapping[str, str], platform: str) -> bool:
    """Whether Qt will start on its xcb (X11) platform plugin."""
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(";")[0].split(":")[0] == "xcb"
    # Qt 6 prefers Wayland in a Wayland session; elsewhere it uses xcb.
    return not environ.get("WAYLAND_DISPLAY")


def xcb_plugin() -> Path | None:
    """PySide6's platforms/libqxcb.so, if PySide6 ships one here."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or spec.origin is None:
        return None
    plugin = Path(spec.origin).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def run_ldd(binary: Path) -> str:
    """ldd's listing of ``binary`` (empty when ldd is not installed or fails)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return ""
    try:
        done = subprocess.run(  # noqa: S603
            [ldd, str(binary)],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout


def missing_sonames(listing: str) -> list[str]:
    """The sonames an ldd listing says are ``not found``, in its order."""
    missing = []
    for line in listing.splitlines():
        name, _, where = line.strip().partition(" => ")
        if where.strip().startswith("not found") and name not in missing:
            missing.append(name)
    return missing


def packages_table(path: Path = TABLE) -> dict[str, str]:
    """soname -> Debian package (``A | B``: either) of every library the window loads."""
    try:
        table: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))["libraries"]
    except (OSError, ValueError, KeyError):
        return {}
    return table


def missing_message(missing: list[str], table: Mapping[str, str], has_apt: bool) -> str | None:
    """One line naming what to install for ``missing`` sonames (None if nothing is)."""
    if not missing:
        return None
    # The first alternative is the newer (t64) name; the last one is the older one's.
    packages: list[str] = []
    unknown: list[str] = []
    for soname in missing:
        if soname in table:
            names = [n.strip() for n in table[soname].split("|")]
            name = names[-1] if len(names) > 1 else names[0]
            if name not in packages:
                packages.append(name)
        else:
            unknown.append(soname)
    if packages and not unknown:
        listed = " ".join(packages)
        how = (
            f"sudo apt install {listed}"
            if has_apt
            else f"install {listed} (or your distribution's package providing {', '.join(missing)})"
        )
        return f"EdgeDesk's window needs {listed}: {how}"
    return (
        f"EdgeDesk's window needs these system libraries, which are not installed: "
        f"{', '.join(missing)}"
        + (f" (Debian/Ubuntu: sudo apt install {' '.join(packages)})" if packages else "")
    )


def window_library_problem(
    environ: Mapping[str, str],
    platform: str,
    plugin: Callable[[], Path | None] = xcb_plugin,
    ldd: Callable[[Path], str] = run_ldd,
    has_apt: Callable[[], bool] = lambda: shutil.which("apt") is not None,
) -> str | None:
    """The one line to print instead of starting Qt, or None when the window can start.

    Only for Qt's xcb platform on Linux; when the plugin or ldd cannot be found, Qt is
    left to try (and explain) on its own.
    """
    if not uses_xcb(environ, platform):
        return None
    found = plugin()
    if found is None:
        return None
    return missing_message(missing_sonames(ldd(found)), packages_table(), has_apt())
