"""The window keeps document collections fresh on its own (rescan soon after start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.app import build_context
from desktop.config import NoPolicy
from desktop.ui import main_window
from desktop.ui.main_window import MainWindow

pytestmark = pytest.mark.qt


def test_deleted_file_leaves_the_index_without_user_action(qtbot, tmp_path: Path,
                                                           tiny_embed: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "keep.md").write_text("hello world\n\nthe cat is a dog\n")
    (folder / "gone.md").write_text("model chat desk edge\n")
    context = build_context(policy=NoPolicy(),
                            cli_settings={"embedding_model": str(tiny_embed)})
    context.library.add("notes", [folder])
    assert context.library.collections()[0].documents == 2
    (folder / "gone.md").unlink()
    monkeypatch.setattr(main_window, "MAINTENANCE_FIRST_MS", 50)
    win = MainWindow(context)
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: context.library.collections()[0].documents == 1, timeout=20_000)
    win.close()
