"""The window at its default size fits a 1366×768 laptop screen, title bar and status bar
included (issue 37, item 3): on Xvfb with openbox, as a user's desktop would place it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSize

from desktop.ui.shell.main_window import PREFERRED_SIZE, default_size

pytestmark = pytest.mark.qt

SCRIPT = r"""
import json, time
from PySide6.QtWidgets import QApplication
from desktop.root.context import build_context
from desktop.base.config import NoPolicy
from desktop.ui.common.look import apply_theme
from desktop.ui.shell.main_window import MainWindow
app = QApplication([])
apply_theme(app, "light")
win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
win.show()

def settle(done):
    # The window manager, another process, frames the window in its own time.
    deadline = time.monotonic() + 30
    while not done() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)

settle(lambda: win.frameGeometry().height() > win.height())  # the title bar is on
frame = win.frameGeometry()
bar = win.statusBar()
bottom = bar.mapToGlobal(bar.rect().bottomLeft()).y()
screen = win.screen().geometry()
print(json.dumps({"frame": [frame.x(), frame.y(), frame.width(), frame.height()],
                  "screen": [screen.width(), screen.height()], "status_bottom": bottom,
                  "status_visible": bar.isVisible(), "offline": win.offline_status.isVisible()}))
win.close()
"""


def test_the_default_size_keeps_the_preferred_size_where_it_fits() -> None:
    assert default_size(QSize(1920, 1080)) == PREFERRED_SIZE
    small = default_size(QSize(1366, 768))
    assert small.height() <= 768 - 40 and small.width() <= 1366


def test_on_a_1366x768_desktop_the_whole_window_is_on_screen(
    tmp_path: Path, edgedesk_home: Path
) -> None:
    from tests.ui.shell.test_tray_session import MISSING, _x_session, script_report

    if MISSING:
        pytest.skip(f"needs an X11 session: install {' '.join(MISSING)} (see .ci/run)")
    with _x_session(tmp_path, screen="1366x768x24") as env:
        seen = script_report(
            SCRIPT, {**env, "QT_QPA_PLATFORM": "xcb", "EDGEDESK_HOME": str(edgedesk_home)}
        )
    x, y, width, height = seen["frame"]
    assert seen["screen"] == [1366, 768]
    assert x >= 0 and y >= 0 and x + width <= 1366 and y + height <= 768, seen
    assert seen["status_visible"] and seen["status_bottom"] < 768, seen  # model, memory, net
