"""A source install without Qt's X11 libraries: one line naming the package, not Qt's abort."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from desktop.ui.shell.system_libraries import (
    missing_message,
    missing_sonames,
    packages_table,
    uses_xcb,
    window_library_problem,
)

LISTING = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-cursor.so.0 => not found
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f)
\tlibxcb-cursor.so.0 => not found
"""


def test_the_missing_libraries_are_read_from_ldd_once_each() -> None:
    assert missing_sonames(LISTING) == ["libxcb-cursor.so.0", "libxkbcommon-x11.so.0"]
    assert missing_sonames("\tlibxcb.so.1 => /lib/libxcb.so.1 (0x1)\n") == []


def test_the_line_names_the_debian_packages_to_install() -> None:
    table = packages_table()
    line = missing_message(["libxcb-cursor.so.0"], table, has_apt=True)
    assert line == "EdgeDesk's window needs libxcb-cursor0: sudo apt install libxcb-cursor0"
    both = missing_message(missing_sonames(LISTING), table, has_apt=True)
    assert both == (
        "EdgeDesk's window needs libxcb-cursor0 libxkbcommon-x11-0: "
        "sudo apt install libxcb-cursor0 libxkbcommon-x11-0"
    )
    other = missing_message(["libxcb-cursor.so.0"], table, has_apt=False)
    assert other is not None and "libxcb-cursor0" in other and "libxcb-cursor.so.0" in other
    unknown = missing_message(["libnew.so.3"], table, has_apt=True)
    assert unknown is not None and "libnew.so.3" in unknown and "\n" not in unknown
    assert missing_message([], table, has_apt=True) is None


def test_only_qt_on_x11_under_linux_is_checked(tmp_path: Path) -> None:
    assert uses_xcb({}, "linux")
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not uses_xcb({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert not uses_xcb({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert uses_xcb({"WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not uses_xcb({}, "win32") and not uses_xcb({}, "darwin")
    plugin = tmp_path / "libqxcb.so"
    calls: list[Path] = []

    def ldd(path: Path) -> str:
        calls.append(path)
        return LISTING

    assert (
        window_library_problem(
            {"QT_QPA_PLATFORM": "offscreen"}, "linux", plugin=lambda: plugin, ldd=ldd
        )
        is None
    )
    assert calls == []  # not even looked at
    line = window_library_problem({}, "linux", plugin=lambda: plugin, ldd=ldd, has_apt=lambda: True)
    assert calls == [plugin] and line is not None and "libxcb-cursor0" in line
    # No PySide6 plugin to look at, or ldd says nothing: Qt is left to try.
    assert window_library_problem({}, "linux", plugin=lambda: None, ldd=ldd) is None
    assert window_library_problem({}, "linux", plugin=lambda: plugin, ldd=lambda p: "") is None


def test_bare_edgedesk_prints_one_line_instead_of_qts_abort(tmp_path: Path) -> None:
    """The real command, with an ldd that reports libxcb-cursor missing (as on a fresh
    Debian desktop): one line on stderr, exit 1, and Qt never started."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_ldd = bin_dir / "ldd"
    fake_ldd.write_text("#!/bin/sh\nprintf '\\tlibxcb-cursor.so.0 => not found\\n'\n")
    fake_ldd.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "QT_QPA_PLATFORM": "xcb",
        "DISPLAY": ":99",
    }
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run(
        [sys.executable, "-m", "desktop"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "EdgeDesk's window needs libxcb-cursor0" in lines[0]
    assert "platform plugin" not in done.stderr
