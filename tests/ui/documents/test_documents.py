"""The Documents screen: a collection is created, indexed on a worker, cancelled, re-indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nStaff get 25 days of paid leave a year.\n")
    (docs / "travel.txt").write_text("Book trains for trips under four hours.\n")
    (docs / "diagram.xyz").write_bytes(b"\x00\x01")
    (docs / "empty.txt").write_text("")
    return docs


@pytest.fixture
def window(qtbot, edgedesk_home: Path, tiny_embed: Path):
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(f'embedding_model = "{tiny_embed}"\n')
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    win.show_page("documents")
    yield win
    win.close()


def test_add_a_folder_indexes_it_and_lists_skipped_files(
    qtbot, window: MainWindow, folder: Path, tiny_embed: Path
) -> None:
    view = window.documents
    assert view.names() == []
    assert str(tiny_embed) in view.model_label.text()
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as finished:
        worker = view.add("handbook", [folder])
        assert worker is not None and view.progress.isVisible()
        assert view.cancel_button.isEnabled()
    report = finished.args[0]
    assert report.added == 2 and not report.cancelled
    qtbot.waitUntil(lambda: not view.is_indexing, timeout=30_000)  # ``done`` comes queued
    assert view.names() == ["handbook"] and view.selected_name() == "handbook"
    assert "2 documents" in view.summary.text()
    assert view.roots.item(0).text() == str(folder.resolve())
    skipped = {
        view.skipped.topLevelItem(n).text(0).rsplit("/", 1)[-1]: view.skipped.topLevelItem(n).text(
            1
        )
        for n in range(view.skipped.topLevelItemCount())
    }
    assert skipped == {"diagram.xyz": "unsupported file type '.xyz'", "empty.txt": "empty file"}
    assert not view.progress.isVisible() and not view.cancel_button.isEnabled()
    # The collection is offered to chats for grounding.
    assert window.chat.collection_box.findData("handbook") >= 0

    (folder / "travel.txt").write_text("Book trains for trips under five hours.\n")
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as again:
        view.reindex("handbook")
    assert (again.args[0].updated, again.args[0].unchanged) == (1, 1)


def test_cancel_stops_indexing_and_reindex_finishes_it(
    qtbot, window: MainWindow, folder: Path
) -> None:
    view = window.documents
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as finished:
        view.add("handbook", [folder])
        view.cancel()  # before the worker reached the first file
    assert finished.args[0].cancelled
    assert "cancelled" in view.status.text()
    assert "0 documents" in view.summary.text()
    qtbot.waitUntil(lambda: not view.is_indexing, timeout=30_000)  # ``done`` comes queued
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000):
        view.reindex("handbook")
    assert "2 documents" in view.summary.text()


def test_a_second_indexing_waits_and_remove_keeps_the_files(
    qtbot, window: MainWindow, folder: Path
) -> None:
    view = window.documents
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000):
        view.add("handbook", [folder])
        with qtbot.waitSignal(view.error, timeout=1000):
            assert view.add("other", [folder]) is None
    qtbot.waitUntil(lambda: not view.is_indexing, timeout=30_000)  # ``done`` comes queued
    view.remove_button.click()
    assert view.names() == []
    assert (folder / "leave.md").exists()


def test_indexing_a_collection_a_terminal_is_indexing_waits_and_says_so(
    qtbot, window: MainWindow, folder: Path
) -> None:
    from contextlib import ExitStack

    from desktop.base.config import Paths
    from desktop.retrieval._scanlock import collection_lock

    view = window.documents
    with ExitStack() as terminal:  # what ``edgedesk docs add`` holds while it indexes
        terminal.enter_context(
            collection_lock(Paths.from_env().data_dir / "locks", "handbook", on_wait=lambda: None)
        )
        view.add("handbook", [folder])
        qtbot.waitUntil(
            lambda: "waiting for another indexing" in view.status.text(), timeout=30_000
        )
        assert view.is_indexing
    qtbot.waitUntil(lambda: not view.is_indexing, timeout=60_000)
    assert "2 documents" in view.summary.text()


def test_sources_list_the_files_indexed_under_each_folder(
    qtbot, window: MainWindow, folder: Path
) -> None:
    view = window.documents
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000):
        view.add("handbook", [folder])
    shown = [view.roots.item(n).text() for n in range(view.roots.count())]
    indexed = window.context.library.collections()[0].files
    assert shown[0] == str(folder) and len(indexed) == 2
    assert [s.strip() for s in shown[1:]] == [str(Path(f).relative_to(folder)) for f in indexed]
