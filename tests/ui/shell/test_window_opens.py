"""The window opens at once: probing the hardware and loading llama.cpp happen elsewhere."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QTimer

from desktop.base.config import NoPolicy
from desktop.catalog._fit import Hardware
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt

GIB = 1024**3


def test_window_keeps_processing_events_while_the_hardware_probe_blocks(qtbot) -> None:
    probing = threading.Event()
    release = threading.Event()
    probed_on: list[threading.Thread] = []

    def slow_probe() -> Hardware:
        # Stands in for the real probe (which imports llama.cpp and asks the GPU driver):
        # it takes as long as the test wants.
        probed_on.append(threading.current_thread())
        probing.set()
        release.wait(30)
        return Hardware(16 * GIB, 8 * GIB, 4)

    context = build_context(policy=NoPolicy())
    context.hardware_probe = slow_probe
    win = MainWindow(context)  # would wait 30 s, on this thread, if it probed here
    qtbot.addWidget(win)
    win.show()
    try:
        qtbot.waitUntil(probing.is_set, timeout=10_000)
        assert threading.main_thread() not in probed_on
        # While the probe still blocks, the event loop runs: a posted timer fires and the
        # window answers the user (a new chat, the status bar).
        fired = threading.Event()
        QTimer.singleShot(0, fired.set)
        qtbot.waitUntil(fired.is_set, timeout=5_000)
        assert not release.is_set() and not context.scheduler_built
        win.chat.input.setPlainText("hello")
        assert win.chat.input.toPlainText() == "hello"
        win.refresh_status()
        assert win.model_status.text() == "No model loaded"
    finally:
        release.set()
    # Once the probe returns, the warm-up builds the scheduler the chat will use.
    qtbot.waitUntil(lambda: context.scheduler_built, timeout=30_000)
    assert threading.main_thread() not in probed_on
    win.close()
