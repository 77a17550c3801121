"""The open window follows what the CLI changes (issue 37, item 11): a model imported,
a key made and a collection indexed in a terminal show without a restart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import wait_listed

pytestmark = pytest.mark.qt


def _cli(home: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "EDGEDESK_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture
def window(qtbot, edgedesk_home: Path, tiny_embed: Path):
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(f'embedding_model = "{tiny_embed}"\n')
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    wait_listed(qtbot, win)
    yield win
    win.close()


def test_a_model_imported_in_a_terminal_appears_in_the_open_window(
    qtbot, window: MainWindow, edgedesk_home: Path, tiny_chat: Path
) -> None:
    box = window.chat.model_box
    assert box.count() == 0 or all("tiny" not in box.itemText(i) for i in range(box.count()))
    _cli(edgedesk_home, "models", "import", str(tiny_chat))
    qtbot.waitUntil(
        lambda: any("tiny" in box.itemData(i) for i in range(box.count())), timeout=30_000
    )


def test_a_key_made_in_a_terminal_appears_on_the_server_screen(
    qtbot, window: MainWindow, edgedesk_home: Path
) -> None:
    window.show_page("server")
    keys = window.server.key_list
    assert "No API keys" in keys.item(0).text()
    _cli(edgedesk_home, "keys", "create", "scripts")
    qtbot.waitUntil(lambda: "scripts" in keys.item(0).text(), timeout=30_000)


def test_a_collection_indexed_in_a_terminal_is_offered_in_the_open_window(
    qtbot, window: MainWindow, edgedesk_home: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "leave.md").write_text("# Leave\n\nStaff get 25 days of paid leave a year.\n")
    _cli(edgedesk_home, "docs", "add", str(notes), "--collection", "handbook")
    qtbot.waitUntil(lambda: "handbook" in window.documents.names(), timeout=30_000)
    box = window.chat.header.collection_box
    qtbot.waitUntil(lambda: box.findData("handbook") >= 0, timeout=5000)
