"""The window keeps document collections fresh on its own (rescan soon after start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from desktop.upkeep import Housekeeping

pytestmark = pytest.mark.qt


def test_deleted_file_leaves_the_index_without_user_action(
    qtbot, tmp_path: Path, tiny_embed: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "keep.md").write_text("hello world\n\nthe cat is a dog\n")
    (folder / "gone.md").write_text("model chat desk edge\n")
    context = build_context(policy=NoPolicy(), cli_settings={"embedding_model": str(tiny_embed)})
    context.library.add("notes", [folder])
    assert context.library.collections()[0].documents == 2
    (folder / "gone.md").unlink()
    # The app's housekeeping, with its first pass due at once instead of after 10 s.
    AppContext.housekeeping.of(context).set(
        Housekeeping(
            lambda: [], lambda cancel: context.maintenance(cancel=cancel), maintain_first_s=0
        )
    )
    win = MainWindow(context)
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: context.library.collections()[0].documents == 1, timeout=20_000)
    win.close()
