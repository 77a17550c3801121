"""The Models screen reads its rows on a worker: the window keeps handling events meanwhile."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.common.workers import WorkerPool
from desktop.ui.models.listing import Listing, list_models
from desktop.ui.models.view import ModelsView

pytestmark = pytest.mark.qt


def test_rows_are_read_off_the_window_thread_and_shown_when_ready(
    qtbot, tiny_chat: Path, context: AppContext
) -> None:
    started = threading.Event()
    release = threading.Event()
    listed_on: list[threading.Thread] = []

    def slow_listing() -> Listing:  # a disk full of models, say
        listed_on.append(threading.current_thread())
        started.set()
        assert release.wait(60)
        return list_models(context)

    pool = WorkerPool()
    view = ModelsView(context, pool, lister=slow_listing)
    qtbot.addWidget(view)
    qtbot.waitUntil(started.is_set, timeout=10_000)
    # The listing is stuck, and the window's thread still runs its event loop.
    tick = QTimer()
    tick.setSingleShot(True)
    with qtbot.waitSignal(tick.timeout, timeout=5000):
        tick.start(0)
    assert view.table_model.rowCount() == 0 and not view.is_listed
    model_id = view.import_file(tiny_chat)  # an import is usable at once all the same
    assert [ref for _, ref in view.chat_models()] == [model_id]
    view.refresh()
    view.refresh()  # asked twice while a listing runs: one more listing, not two

    with qtbot.waitSignal(view.listed, timeout=30_000):
        release.set()
    assert view.is_listed
    assert len(listed_on) == 2 and threading.main_thread() not in listed_on
    ids = [view.table_model.row_at(n).id for n in range(view.table_model.rowCount())]
    assert ids[0] == model_id and "glm-edge-1.5b" in ids and "bge-small-en-v1.5" in ids
    assert view.hardware_label.text().startswith("This machine: RAM")
    assert pool.stop_all()


def test_a_listing_that_fails_says_why_and_keeps_the_screen_usable(qtbot, tiny_chat: Path) -> None:
    from desktop.base.errors import ConfigError

    def broken() -> Listing:
        raise ConfigError("the installed-model index is unreadable: fix or delete it")

    pool = WorkerPool()
    view = ModelsView(build_context(policy=NoPolicy()), pool, lister=broken)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.error, timeout=10_000) as error:
        pass
    assert "unreadable" in error.args[0] and "unreadable" in view.status.text()
    qtbot.waitUntil(lambda: view.is_listed, timeout=5000)
    model_id = view.import_file(tiny_chat)
    assert [ref for _, ref in view.chat_models()] == [model_id]
    assert pool.stop_all()
