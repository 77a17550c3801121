"""One window per data folder, and no window lost to a tray that is not there (issue 24).

Real ``edgedesk`` processes on an X11 desktop (Xvfb, openbox, trayer), as
tests/ui/shell/test_tray_session.py runs them: a tray that goes away while the window is
open must not swallow the window at the next close, and a second launch shows the
first window (importing the file it was given) instead of starting a second server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.ui.shell.first_run import settle
from tests.conftest import wait_until
from tests.ui.server.test_server_view import free_port
from tests.ui.shell.test_tray_session import (
    MISSING,
    _edgedesk_windows,
    _health,
    _viewable,
    _x_session,
)

pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"needs an X11 session: install {' '.join(MISSING)} (see .ci/run)"
)


def _named(env: dict[str, str], title: str) -> bool:
    """Whether a window titled ``title`` is on the display."""
    found = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--name", title],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return bool(found.stdout.strip())


def _home(edgedesk_home: Path, port: int) -> None:
    (edgedesk_home / "config").mkdir(parents=True)
    (edgedesk_home / "config" / "settings.toml").write_text(
        f"keep_in_tray = true\n[server]\nstart_with_app = true\nport = {port}\n"
        "require_key = false\n"
    )
    (edgedesk_home / "data").mkdir()
    settle(edgedesk_home / "data", "skipped")  # straight to the window, no setup dialog


def _launch(env: dict[str, str], home: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "desktop", *args],
            stderr=err,
            stdout=subprocess.DEVNULL,
            env={**env, "QT_QPA_PLATFORM": "xcb", "EDGEDESK_HOME": str(home)},
        )


def _stop(app: subprocess.Popen[bytes]) -> None:
    if app.poll() is None:
        app.kill()
        app.wait()


def test_closing_quits_once_the_tray_has_gone_away(tmp_path: Path, edgedesk_home: Path) -> None:
    port = free_port()
    _home(edgedesk_home, port)
    started: list[subprocess.Popen[bytes]] = []
    with _x_session(tmp_path, processes=started) as env:
        log = tmp_path / "app.log"
        app = _launch(env, edgedesk_home, log)
        try:
            wait_until(lambda: "window open" in log.read_text(), 90, "the window")
            wait_until(lambda: _health(port), 30, "the server")
            main = max(_edgedesk_windows(env), key=lambda w: w[1] * w[2])
            tray = started[2]
            tray.terminate()  # the panel crashed, or an extension was switched off
            tray.wait(timeout=10)
            subprocess.run(["wmctrl", "-c", "EdgeDesk"], env=env, check=True)
            # Hidden with no icon to come back from would be lost: it quits instead, once
            # the user has read that the server stops and said so (issue 50, item 10).
            wait_until(lambda: _named(env, "Quit EdgeDesk?"), 30, "the question before quitting")
            subprocess.run(["xdotool", "key", "alt+q"], env=env, check=True)
            assert app.wait(timeout=30) == 0, log.read_text()
            assert not _viewable(env, main[0]) and not _health(port)
        finally:
            _stop(app)


def test_a_second_launch_shows_the_first_window_and_hands_it_a_file(
    tmp_path: Path, edgedesk_home: Path, tiny_chat: Path
) -> None:
    port = free_port()
    _home(edgedesk_home, port)
    with _x_session(tmp_path) as env:
        log = tmp_path / "first.log"
        first = _launch(env, edgedesk_home, log)
        try:
            wait_until(lambda: "window open" in log.read_text(), 90, "the window")
            wait_until(lambda: _health(port), 30, "the server")
            main = max(_edgedesk_windows(env), key=lambda w: w[1] * w[2])
            subprocess.run(["wmctrl", "-c", "EdgeDesk"], env=env, check=True)
            wait_until(lambda: not _viewable(env, main[0]), 15, "the window to hide to the tray")

            second_log = tmp_path / "second.log"
            second = _launch(env, edgedesk_home, second_log, "--open", str(tiny_chat))
            assert second.wait(timeout=60) == 0, second_log.read_text()
            assert "already open" in second_log.read_text()
            assert "window open" not in second_log.read_text()  # no second window, no server
            wait_until(lambda: _viewable(env, main[0]), 15, "the first window to come back")
            installed = edgedesk_home / "data" / "installed.json"
            wait_until(
                lambda: installed.exists() and "tiny-chat" in installed.read_text(),
                30,
                "the handed file to be imported",
            )
            assert [m["files"] for m in json.loads(installed.read_text())["models"]] == [
                [str(tiny_chat)]
            ]
            assert first.poll() is None and _health(port)
        finally:
            _stop(first)
