"""The tray on a real X11 desktop (Xvfb + openbox + trayer, the app on Qt's xcb platform).

Offscreen Qt has no system tray, so tests/ui/shell/test_tray.py can only stand a fake in for
the icon. Here the real ``edgedesk`` process embeds its icon in a freedesktop tray:
closing the window (as the window manager does) hides it while the server keeps
answering, clicking the icon brings it back, and SIGTERM still quits cleanly.
CI installs the tools (.ci/run); without them the test says what is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.ui.shell.first_run import settle
from tests.conftest import scaled, wait_until
from tests.ui.server.test_server_view import free_port

TOOLS = ("Xvfb", "openbox", "trayer", "xdotool", "wmctrl", "xwininfo")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"needs an X11 session: install {' '.join(MISSING)} (see .ci/run)"
)

# `xwininfo -root -tree` lines: id "name": (class) WxH+x+y  +absx+absy
_WINDOW = re.compile(
    r'(0x[0-9a-f]+) "EdgeDesk": \(.*\)\s+(\d+)x(\d+)\+-?\d+\+-?\d+\s+'
    r"\+(-?\d+)\+(-?\d+)"
)


# What ties a process to the developer's own desktop session: with these, Qt would show
# the icon through that desktop's D-Bus tray (or libdbus would find its bus under
# XDG_RUNTIME_DIR) instead of the test's X11 tray, and notifications would pop up there.
_SESSION_VARS = (
    "WAYLAND_DISPLAY",
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_DESKTOP",
    "XDG_SESSION_TYPE",
    "DESKTOP_SESSION",
    "QT_QPA_PLATFORMTHEME",
)
TRAYER = [
    "trayer",
    "--edge",
    "top",
    "--align",
    "right",
    "--widthtype",
    "request",
    "--height",
    "24",
    "--SetDockType",
    "true",
]


def _session_env(display: str, runtime: Path) -> dict[str, str]:
    """This process's environment on ``display``, cut off from the desktop it runs in."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("DBUS_") and k not in _SESSION_VARS
    }
    return {**env, "DISPLAY": display, "XDG_RUNTIME_DIR": str(runtime)}


def script_report(script: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Run Python ``script`` as a child with ``env``; the JSON it printed last."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=dict(env),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@contextlib.contextmanager
def _x_session(
    tmp_path: Path,
    tray: list[str] = TRAYER,
    timeout: float = 60.0,
    processes: list[subprocess.Popen[bytes]] | None = None,
    screen: str = "1280x800x24",
) -> Iterator[dict[str, str]]:
    """Xvfb (one ``screen``, WxHxDepth), openbox and ``tray``, all stopped (and their pipes
    closed) however it ends; ``processes`` (if given) receives them, in that order."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    processes = [] if processes is None else processes
    with (tmp_path / "x.log").open("w") as log:
        try:
            xvfb = subprocess.Popen(
                ["Xvfb", "-displayfd", "1", "-screen", "0", screen, "-nolisten", "tcp"],
                stdout=subprocess.PIPE,
                stderr=log,
            )
            processes.append(xvfb)
            assert xvfb.stdout is not None
            number = xvfb.stdout.readline().decode().strip()
            assert number, "Xvfb did not start; see x.log"
            env = _session_env(f":{number}", runtime)
            processes.append(
                subprocess.Popen(["openbox", "--sm-disable"], env=env, stdout=log, stderr=log)
            )
            time.sleep(0.5)
            processes.append(subprocess.Popen(tray, env=env, stdout=log, stderr=log))
            wait_until(lambda: "trayer" in _tree(env), timeout, "the tray")
            yield env
        finally:
            for process in reversed(processes):  # the helpers before their X server
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                if process.stdout is not None:
                    process.stdout.close()


@pytest.fixture
def x_session(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An X display with a window manager and a system tray; yields its environment."""
    with _x_session(tmp_path) as env:
        yield env


def test_a_session_that_fails_to_start_leaves_nothing_running(tmp_path: Path, monkeypatch) -> None:
    started: list[subprocess.Popen[bytes]] = []

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    try:
        with (
            pytest.raises(
                AssertionError, match=f"never happened within {scaled(1.0):g} s: the tray"
            ),
            _x_session(tmp_path, tray=["sleep", "60"], timeout=1.0),
        ):
            pass
        assert [p.args[0] for p in started[:3]] == ["Xvfb", "openbox", "sleep"]
        assert [p.poll() is None for p in started] == [False] * len(started)
        assert started[0].stdout is not None and started[0].stdout.closed
    finally:
        for process in started:  # whatever a broken fixture left behind
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


def test_the_session_is_cut_off_from_the_desktops_dbus(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
    monkeypatch.setenv("DBUS_STARTER_ADDRESS", "unix:path=/run/user/1000/bus")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "GNOME")
    env = _session_env(":99", tmp_path)
    assert not [k for k in env if k.startswith("DBUS_")]
    assert env["XDG_RUNTIME_DIR"] == str(tmp_path) and "XDG_CURRENT_DESKTOP" not in env
    assert env["DISPLAY"] == ":99" and env["PATH"] == os.environ["PATH"]


def _tree(env: dict[str, str]) -> str:
    return subprocess.run(
        ["xwininfo", "-root", "-tree"], env=env, capture_output=True, text=True, check=False
    ).stdout


def _edgedesk_windows(env: dict[str, str]) -> list[tuple[str, int, int, int, int]]:
    return [
        (m[1], int(m[2]), int(m[3]), int(m[4]), int(m[5])) for m in _WINDOW.finditer(_tree(env))
    ]


def _viewable(env: dict[str, str], window: str) -> bool:
    info = subprocess.run(
        ["xwininfo", "-id", window], env=env, capture_output=True, text=True, check=False
    ).stdout
    return "IsViewable" in info


def _click(env: dict[str, str], window: tuple[str, int, int, int, int]) -> None:
    _, width, height, x, y = window
    subprocess.run(
        ["xdotool", "mousemove", str(x + width // 2), str(y + height // 2)], env=env, check=True
    )
    time.sleep(0.5)  # as a hand would: the pointer arrives before the button goes down
    subprocess.run(["xdotool", "click", "1"], env=env, check=True)


def _health(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
    except httpx.HTTPError:
        return False


def test_tray_keeps_the_server_running_and_brings_the_window_back(
    x_session: dict[str, str], edgedesk_home: Path, tmp_path: Path
) -> None:
    port = free_port()
    (edgedesk_home / "config").mkdir(parents=True)
    (edgedesk_home / "config" / "settings.toml").write_text(
        f"keep_in_tray = true\n[server]\nstart_with_app = true\nport = {port}\n"
        "require_key = false\n"
    )
    (edgedesk_home / "data").mkdir()
    settle(edgedesk_home / "data", "skipped")  # straight to the window, no setup dialog
    stderr = tmp_path / "app.log"
    with stderr.open("w") as err:
        app = subprocess.Popen(
            [sys.executable, "-m", "desktop"],
            stderr=err,
            stdout=subprocess.DEVNULL,
            env={**x_session, "QT_QPA_PLATFORM": "xcb", "EDGEDESK_HOME": str(edgedesk_home)},
        )
    try:
        wait_until(lambda: "window open" in stderr.read_text(), 90, "the window")
        windows = wait_until(
            lambda: [
                w for w in _edgedesk_windows(x_session) if 16 <= w[1] <= 64 and 16 <= w[2] <= 64
            ],
            30,
            "the tray icon",
        )
        icon = windows[0]
        main = max(_edgedesk_windows(x_session), key=lambda w: w[1] * w[2])
        assert main[1] >= 640 and _viewable(x_session, main[0])
        wait_until(lambda: _health(port), 30, "the server")

        subprocess.run(["wmctrl", "-c", "EdgeDesk"], env=x_session, check=True)
        wait_until(lambda: not _viewable(x_session, main[0]), 15, "the window to hide")
        time.sleep(1.0)  # a span in which an app that quit on close would be gone
        assert app.poll() is None, stderr.read_text()  # hidden, not quit
        assert _health(port)  # IDEs keep their endpoint while the window is closed

        # The first hide tells the user the server keeps running: a balloon the app maps
        # in its own time (slower on a busy machine than the sleep above).
        balloon = wait_until(
            lambda: [
                w
                for w in _edgedesk_windows(x_session)
                if w[0] not in (icon[0], main[0]) and w[1] > 64 and _viewable(x_session, w[0])
            ],
            15,
            "the balloon saying the server keeps running",
        )
        _click(x_session, balloon[0])  # it covers the icon on a top panel: a click restores
        wait_until(lambda: _viewable(x_session, main[0]), 15, "the window to come back")
        time.sleep(1.5)  # let the window manager frame it again before the next close

        subprocess.run(["wmctrl", "-c", "EdgeDesk"], env=x_session, check=True)
        wait_until(lambda: not _viewable(x_session, main[0]), 15, "the window to hide again")
        time.sleep(1.0)  # the window manager unframes the hidden window first
        _click(x_session, icon)  # no message the second time: the icon itself is clicked
        wait_until(
            lambda: _viewable(x_session, main[0]), 15, "the window to come back from the icon"
        )
        assert _health(port)

        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=20) == 0, stderr.read_text()
        assert not _health(port)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
