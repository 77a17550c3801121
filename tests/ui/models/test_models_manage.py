"""Models screen: verified checksums shown, remove, and Hub search (gated by offline mode)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub
from tests.ui.conftest import CAT_FILE, CAT_ID, wait_listed

pytestmark = pytest.mark.qt

OTHER_REPO = "someone/Tiny-Chat-GGUF"
OTHER_FILE = "tiny-chat-Q8_0.gguf"


@pytest.fixture
def hub(hub: FakeHub, tiny_chat: Path) -> FakeHub:
    """The shared fake Hub (tests/ui/conftest.py), plus a repo outside the catalog."""
    hub.add_repo(OTHER_REPO, {OTHER_FILE: tiny_chat.read_bytes(), "README.md": b"hi"}, downloads=7)
    return hub


def _row(view, model_id: str) -> int:
    model = view.table_model
    return next(n for n in range(model.rowCount()) if model.row_at(n).id == model_id)


def test_installed_model_shows_its_checksum_and_can_be_removed(
    qtbot, hub: FakeHub, tiny_chat: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    wait_listed(qtbot, win)
    view = win.models
    worker = view.download(CAT_ID)
    assert worker is not None
    qtbot.waitUntil(
        lambda: bool(view.table_model.row_at(_row(view, CAT_ID)).installed), timeout=20_000
    )  # the screen's own refresh has run
    view.table.selectRow(_row(view, CAT_ID))
    digest = hashlib.sha256(tiny_chat.read_bytes()).hexdigest()
    assert f"{CAT_FILE}: {digest[:16]}…" in view.details.text()
    assert digest in view.details.toolTip()
    installed = Path(view.table_model.row_at(_row(view, CAT_ID)).installed[0])
    assert installed.exists()

    with qtbot.waitSignal(view.listed, timeout=10_000):  # re-read on a worker
        assert view.remove(CAT_ID)
    assert not view.table_model.row_at(_row(view, CAT_ID)).installed
    assert not installed.exists()  # downloaded by us: deleted
    assert win.chat.model_box.findData(CAT_ID) < 0
    assert tiny_chat.exists()
    win.close()


def test_hub_search_lists_quants_and_downloads_one(
    qtbot, hub: FakeHub, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    search = win.models.hub_search
    search.query.setText("tiny")
    with qtbot.waitSignal(search.searched, timeout=10_000) as found:
        assert search.search() is not None
    assert [h.repo for h in found.args[0]] == [OTHER_REPO]
    repo = search.results.topLevelItem(0)
    assert repo.text(0) == OTHER_REPO and repo.childCount() == 1  # README is not a quant
    quant = repo.child(0)
    assert quant.text(0) == "Q8_0"
    search.results.setCurrentItem(quant)
    with qtbot.waitSignal(win.models.models_changed, timeout=20_000):
        search.get_button.click()
    # While it downloads the pick has a row of its own; once installed, only the model's.
    qtbot.waitUntil(
        lambda: any(
            r.tier == "hub" and r.installed
            for r in (
                win.models.table_model.row_at(n) for n in range(win.models.table_model.rowCount())
            )
        ),
        timeout=20_000,
    )
    rows = [
        win.models.table_model.row_at(n)
        for n in range(win.models.table_model.rowCount())
        if win.models.table_model.row_at(n).tier == "hub"
    ]
    assert len(rows) == 1
    row = rows[0]
    # Named as every model is, by the id it is used by: no ".gguf" (as in the chat).
    assert row.name == row.id == OTHER_FILE.removesuffix(".gguf") and row.installed
    assert win.chat.model_box.findData(row.id) >= 0
    win.close()


def test_offline_mode_refuses_hub_search(qtbot, hub: FakeHub) -> None:
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    search = win.models.hub_search
    search.query.setText("glm")
    with qtbot.waitSignal(search.error, timeout=2000) as error:
        assert search.search() is None
    assert "offline" in error.args[0].lower()
    assert "offline" in search.status.text().lower()
    assert hub.log == []  # nothing reached the Hub
    assert search.results.isHidden()
    win.close()


def test_offline_ticked_then_unticked_in_settings_governs_the_hub_search(
    qtbot, hub: FakeHub, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    search = win.models.hub_search
    search.query.setText("tiny")
    dialog = win.open_settings()
    dialog.offline.setChecked(True)
    dialog.accept()
    assert "Offline mode" in win.offline_status.text() and win.offline_status.isVisibleTo(win)
    with qtbot.waitSignal(search.error, timeout=2000) as error:
        assert search.search() is None
    assert "offline" in error.args[0].lower()
    assert hub.log == []  # nothing reached the Hub

    again = win.open_settings()
    again.offline.setChecked(False)
    again.accept()
    # Nothing claims "Online": no network check is made (issue 50, item 15).
    assert win.offline_status.text() == "" and not win.offline_status.isVisibleTo(win)
    with qtbot.waitSignal(search.searched, timeout=10_000) as found:
        assert search.search() is not None
    assert [h.repo for h in found.args[0]] == [OTHER_REPO]
    assert hub.log
    win.close()
