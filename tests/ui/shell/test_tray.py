"""Closing the window: quit, or hide to the tray while the server runs (if enabled)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from desktop.ui.shell.tray import hides_on_close
from tests.ui.server.test_server_view import free_port

pytestmark = pytest.mark.qt


def test_hide_only_with_the_setting_a_tray_a_running_server_and_no_quit_request() -> None:
    base = {"keep_in_tray": True, "tray_available": True, "server_running": True, "quitting": False}
    assert hides_on_close(**base)
    for key, value in (
        ("keep_in_tray", False),
        ("tray_available", False),
        ("server_running", False),
        ("quitting", True),
    ):
        assert not hides_on_close(**{**base, key: value}), key


def test_offscreen_has_no_tray_so_closing_quits(qtbot, edgedesk_home: Path) -> None:
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text("keep_in_tray = true\n")
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    assert win.context.settings.keep_in_tray
    assert win.tray is None and not win.hides_on_close()
    win.close()
    assert win._closed  # shut down, not merely hidden


def test_with_a_tray_closing_hides_while_the_server_runs(qtbot, edgedesk_home: Path) -> None:
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text("keep_in_tray = true\n")
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"server.port": free_port()}))
    qtbot.addWidget(win)
    win.show()

    class FakeTray:  # offscreen Qt has no system tray; stands in for the icon only
        notified = 0

        def available(self) -> bool:
            return True  # the real one asks the desktop (tests/ui/shell/test_tray_session.py)

        def notify_hidden(self) -> None:
            FakeTray.notified += 1

    win.tray = FakeTray()  # type: ignore[assignment]
    assert not win.hides_on_close()  # server stopped: nothing to keep running
    with qtbot.waitSignal(win.server.state_changed, timeout=15_000):
        win.server.toggle_server()
    qtbot.waitUntil(lambda: win.server.running, timeout=15_000)
    win.close()
    assert not win.isVisible() and not win._closed and FakeTray.notified == 1
    assert win.context.api_server.running  # still serving
    win.quit_app()
    assert win._closed and not win.context.api_server.running
