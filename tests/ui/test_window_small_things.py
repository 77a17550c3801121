"""The small things people notice in the window (issue 37): "Copied", one empty chat,
rename with the whole title, sensible context steps, window words when offline, and a
broken model file said in the user's words."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QToolTip

from desktop.ui.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt
LEFT = Qt.MouseButton.LeftButton


def test_copy_says_copied(qtbot, window: MainWindow) -> None:
    turn = send(qtbot, window, "Say hi", max_tokens=8)
    bubble = window.chat._bubbles[-1]
    qtbot.mouseClick(bubble.copy_button, LEFT)
    assert QGuiApplication.clipboard().text() == turn.content
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == "Copied", timeout=3000)
    window.show_page("server")
    copy = window.server.copy_address
    qtbot.mouseClick(copy, LEFT)
    assert copy.text() == "Copied"  # on the button itself, where the eye is
    qtbot.waitUntil(lambda: copy.text() == "Copy address", timeout=5000)  # then back
