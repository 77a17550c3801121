"""Downloading a catalog model from the Models screen: progress, pause, resume, install."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.app import build_context
from desktop.config import NoPolicy
from desktop.ui.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub, Fault
from tests.ui.conftest import CAT_FILE, CAT_ID, CAT_REPO

pytestmark = pytest.mark.qt



def test_download_shows_progress_pauses_resumes_and_installs(qtbot, hub: FakeHub,
                                                              tiny_chat: Path) -> None:
    size = len(tiny_chat.read_bytes())
    hub.add_fault(CAT_REPO, CAT_FILE, Fault("throttle", bytes_per_s=size // 4, times=1))
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    win.show_page("models")
    view = win.models
    seen: list[float] = []
    worker = view.download(CAT_ID)
    assert worker is not None
    worker.progress.connect(lambda _key, p: seen.append(p.done / p.total))
    qtbot.waitUntil(lambda: bool(seen) and 0 < seen[-1] < 1, timeout=10_000)
    assert view.progress.isVisible() and "/s" in view.status.text()
    with qtbot.waitSignal(worker.paused, timeout=10_000):
        view.pause(CAT_ID)
    row = next(n for n in range(view.table_model.rowCount())
               if view.table_model.row_at(n).id == CAT_ID)
    # The view hears the worker's signal through its own queued connection.
    qtbot.waitUntil(lambda: view.table_model.index(row, 6).data() == "paused", timeout=5000)
    kept = sum(entry.sent for entry in hub.downloads())
    assert 0 < kept < size

    resumed = view.download(CAT_ID)
    assert resumed is not None and resumed is not worker
    qtbot.waitUntil(lambda: bool(view.table_model.row_at(row).installed), timeout=20_000)
    assert hub.downloads()[-1].range == f"bytes={kept}-"  # resumed, not restarted
    assert view.table_model.row_at(row).installed
    assert ("GLM-Edge 1.5B Chat", CAT_ID) in view.chat_models()
    assert win.chat.model_box.findData(CAT_ID) >= 0  # offered in the chat at once
    win.close()


def test_offline_mode_refuses_downloads_with_a_message(qtbot, hub: FakeHub) -> None:
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.models.error, timeout=2000) as error:
        assert win.models.download(CAT_ID) is None
    assert "offline" in error.args[0].lower()
    assert hub.downloads() == []
    win.close()
