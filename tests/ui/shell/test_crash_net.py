"""A bug in a Qt slot is logged with its traceback and named in one line; the window lives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop.ui.shell.app import _install_crash_net

pytestmark = pytest.mark.qt


@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_slot_goes_to_the_crash_log(
    qapp: QApplication, qtbot, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    previous = _install_crash_net(qapp)
    try:

        def broken_slot() -> None:
            raise LookupError("a slot nobody tested")

        QTimer.singleShot(0, broken_slot)
        log = edgedesk_home / "logs" / "crash.log"
        qtbot.waitUntil(log.exists, timeout=10_000)
    finally:
        sys.excepthook = previous
    text = log.read_text()
    assert "LookupError: a slot nobody tested" in text and "Traceback" in text
    err = capsys.readouterr().err
    assert f"the details are in {log}" in err and "Traceback" not in err
