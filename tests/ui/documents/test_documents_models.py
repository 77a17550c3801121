"""A collection's embedding model is picked in the window; a missing one is downloaded there."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub
from tests.ui.conftest import wait_listed

pytestmark = pytest.mark.qt

BGE_ID = "bge-small-en-v1.5"
BGE_REPO = "CompendiumLabs/bge-small-en-v1.5-gguf"
BGE_FILE = "bge-small-en-v1.5-q8_0.gguf"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nStaff get 25 days of paid leave a year.\n")
    (docs / "travel.txt").write_text("Book trains for trips under four hours.\n")
    return docs


@pytest.fixture
def bge_hub(hub: FakeHub, tiny_embed: Path) -> FakeHub:
    """The fake Hub (tests/conftest.py) serving the tiny embedding model as the catalog's
    BGE small EN (and, from tests/ui/conftest.py, the GLM-Edge chat model)."""
    hub.add_repo(BGE_REPO, {BGE_FILE: tiny_embed.read_bytes()}, downloads=10)
    return hub


@pytest.fixture
def window(qtbot, bge_hub: FakeHub, context: AppContext):
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("documents")
    yield win
    win.close()


def test_the_dialog_offers_imported_models_and_marks_catalog_ones_to_download(
    qtbot, window: MainWindow, tiny_embed: Path, tiny_chat: Path
) -> None:
    imported = window.models.import_file(tiny_embed)
    window.models.import_file(tiny_chat)  # a chat model is no embedding model
    dialog = window.documents.new_collection_dialog()
    qtbot.addWidget(dialog)
    offered = {
        dialog.model.itemData(n).ref: dialog.model.itemText(n) for n in range(dialog.model.count())
    }
    assert imported in offered and "not downloaded" not in offered[imported]
    assert "not downloaded" in offered[BGE_ID] and "not downloaded" in offered["bge-m3"]
    assert not any("tiny-chat" in ref for ref in offered)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    # The settings' default is not on disk and another embedding model is: that one is
    # preselected (issue 24, item 6), the default is offered after it.
    assert dialog.model.currentData().ref == imported
    refs = [dialog.model.itemData(n).ref for n in range(dialog.model.count())]
    assert refs[0] == imported and refs[1] == BGE_ID
    assert not ok.isEnabled()  # no name yet
    dialog.name.setText("handbook")
    assert ok.isEnabled() and ok.text() == "Create"
    assert dialog.select(BGE_ID)
    assert ok.text() == "Download and create" and dialog.choice()[0] == "handbook"
    assert dialog.select(imported)
    assert dialog.choice()[1].ref == imported


def test_a_collection_uses_the_imported_model_picked(
    qtbot, window: MainWindow, tiny_embed: Path, folder: Path
) -> None:
    view = window.documents
    imported = window.models.import_file(tiny_embed)
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as finished:
        assert view.add("handbook", [folder], imported) is not None
    assert finished.args[0].added == 2
    assert f"embedding model: {imported}" in view.summary.text()


def test_a_missing_catalog_model_is_downloaded_then_the_collection_indexed(
    qtbot, window: MainWindow, bge_hub: FakeHub, folder: Path
) -> None:
    view = window.documents
    assert view.add("handbook", [folder], BGE_ID) is None  # nothing indexed yet
    assert view.download_button.isVisible()
    assert "not downloaded yet" in view.status.text()
    assert "edgedesk models pull" not in view.status.text()
    assert bge_hub.downloads() == [] and view.names() == []
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as finished:
        qtbot.mouseClick(view.download_button, _left())
    assert finished.args[0].added == 2
    assert len(bge_hub.downloads()) == 1
    assert view.names() == ["handbook"] and f"embedding model: {BGE_ID}" in view.summary.text()
    assert not view.download_button.isVisible()
    assert window.models._installed(BGE_ID) is not None  # the Models screen knows it too

    assert window.models.remove(BGE_ID)  # gone later: re-indexing offers it again
    (folder / "travel.txt").write_text("Book trains for trips under five hours.\n")
    assert view.reindex("handbook") is None
    assert view.download_button.isVisible() and "edgedesk models pull" not in view.status.text()
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as again:
        view.download_button.click()
    assert (again.args[0].updated, again.args[0].unchanged) == (1, 1)
    assert len(bge_hub.downloads()) == 2


def _new_collection(
    qtbot, window: MainWindow, model: Path, folder: str, monkeypatch: pytest.MonkeyPatch
) -> str:
    """New collection… as a user does it: "handbook", ``model`` imported and chosen, then
    ``folder`` in the folder picker ("": Cancel); waits for the indexing. The model's id."""
    from PySide6.QtWidgets import QFileDialog

    from desktop.ui.documents.new_collection import NewCollectionDialog

    imported = window.models.import_file(model)

    def user_fills_in(dialog: NewCollectionDialog) -> int:
        dialog.name.setText("handbook")
        assert dialog.select(imported)
        qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), _left())
        return int(dialog.result())

    monkeypatch.setattr(NewCollectionDialog, "exec", user_fills_in)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a: folder)
    with qtbot.waitSignal(window.documents.indexing_finished, timeout=30_000):
        qtbot.mouseClick(window.documents.new_button, _left())
    return imported


def test_new_collection_button_asks_name_model_and_folder_then_indexes(
    qtbot, window: MainWindow, tiny_embed: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported = _new_collection(qtbot, window, tiny_embed, str(folder), monkeypatch)
    assert window.documents.names() == ["handbook"]
    assert f"embedding model: {imported}" in window.documents.summary.text()


def test_a_new_collection_is_kept_when_the_folder_picker_is_closed(
    qtbot, window: MainWindow, tiny_embed: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    imported = _new_collection(qtbot, window, tiny_embed, "", monkeypatch)  # Cancel
    # The named collection is there, empty, with the chosen model: files can follow.
    view = window.documents
    assert view.names() == ["handbook"]
    assert f"embedding model: {imported}" in view.summary.text()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a: str(folder))
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000) as added:
        view._ask_folder()
    assert added.args[0].added >= 1


def test_offline_with_no_embedding_model_the_screen_promises_no_download(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.ui.documents import view as documents
    from desktop.ui.documents.new_collection import EmbeddingChoice

    # No embedding model on this device: only the catalog's default, not downloaded.
    absent = [EmbeddingChoice(BGE_ID, "BGE small EN", False, 37_000_000)]
    monkeypatch.setattr(documents, "embedding_choices", lambda _context: absent)
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    win.show()
    win.show_page("documents")  # the screen looks its models up when first shown
    text = win.documents.model_label.text()
    assert "downloads are off" in text and "Models screen" in text
    assert "first" not in text  # not "a new collection downloads … first"
    win.close()


def test_offline_the_download_is_offered_disabled_saying_why_and_nothing_is_created(
    qtbot, bge_hub: FakeHub, folder: Path
) -> None:
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    view = win.documents
    assert view.add("handbook", [folder]) is None  # the default model is not downloaded
    win.show_page("documents")
    # Said before any click, with the remedy for what made it offline (here --offline).
    assert not view.download_button.isHidden() and not view.download_button.isEnabled()
    assert "--offline" in view.download_button.toolTip()
    assert "--offline" in view.status.text() and "Download it" not in view.status.text()
    assert view.download_offered() is None  # pressed all the same: refused, said the same
    assert "--offline" in view.status.text()
    assert bge_hub.downloads() == [] and view.names() == []
    dialog = view.new_collection_dialog()  # a model to download cannot be picked to create
    qtbot.addWidget(dialog)
    dialog.name.setText("notes")
    assert dialog.select(BGE_ID)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled() and "--offline" in dialog.note.text()
    win.close()


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_the_dialog_imports_an_embedding_model_from_disk_itself(
    qtbot, window: MainWindow, tiny_embed: Path, tiny_chat: Path
) -> None:
    dialog = window.documents.new_collection_dialog()
    qtbot.addWidget(dialog)
    assert not dialog.import_button.isHidden()
    assert not dialog.import_file(tiny_chat)  # a chat model: refused, and said why
    assert "not an embedding model" in dialog.note.text()
    assert dialog.import_file(tiny_embed)
    picked = dialog.model.currentData()
    assert picked.installed and "tiny" in picked.ref
    dialog.name.setText("handbook")
    assert dialog.choice() == ("handbook", picked)
    # Imported for good: the Models screen and the next dialog know it too.
    wait_listed(qtbot, window)
    qtbot.waitUntil(
        lambda: any(
            window.models.table_model.row_at(n).id == picked.ref
            for n in range(window.models.table_model.rowCount())
        ),
        timeout=10_000,
    )
