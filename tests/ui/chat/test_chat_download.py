"""A grounded chat whose collection's embedding model is missing offers the Download."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.root.context import AppContext
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub
from tests.ui.documents.test_documents_models import BGE_ID, _left, bge_hub, folder  # noqa: F401

pytestmark = pytest.mark.qt


def test_the_chat_offers_the_missing_embedding_model_then_answers(
    qtbot,
    bge_hub: FakeHub,  # noqa: F811 - the fixture imported above
    folder: Path,  # noqa: F811
    tiny_chat: Path,
    context: AppContext,
) -> None:
    window = MainWindow(context)
    qtbot.addWidget(window)
    documents, chat = window.documents, window.chat
    # A collection embedded with the catalog's BGE model, which is then removed.
    documents.add("handbook", [folder], BGE_ID)
    with qtbot.waitSignal(documents.indexing_finished, timeout=30_000):
        documents.download_button.click()
    assert window.models.remove(BGE_ID)

    window.use_model(window.models.import_file(tiny_chat))
    assert chat.current is not None
    chat.current.collection = "handbook"
    chat.current.max_tokens = 4
    chat.input.setPlainText("How many days of leave?")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as refused:
        qtbot.mouseClick(chat.send_button, _left())
    assert refused.args[0] is None  # no answer yet
    assert not chat.download_button.isHidden()
    assert f"needs the embedding model {BGE_ID}" in chat.notice.text()
    assert "edgedesk models pull" not in chat.notice.text()
    assert [t.role for t in chat.current.turns] == ["user"]  # the question waits

    with qtbot.waitSignal(chat.generation_finished, timeout=60_000) as answered:
        qtbot.mouseClick(chat.download_button, _left())
    assert answered.args[0] is not None  # answered, grounded, once the model came
    assert len(bge_hub.downloads()) == 2
    assert chat.download_button.isHidden()
    assert [t.role for t in chat.current.turns] == ["user", "assistant"]
    assert chat.current.turns[-1].sources  # retrieval ran with the downloaded model
    window.close()


def test_offline_the_chat_offers_the_missing_model_disabled_saying_why(
    qtbot,
    bge_hub: FakeHub,  # noqa: F811 - the fixture imported above
    folder: Path,  # noqa: F811
    tiny_chat: Path,
    context: AppContext,
) -> None:
    window = MainWindow(context)
    qtbot.addWidget(window)
    documents, chat = window.documents, window.chat
    documents.add("handbook", [folder], BGE_ID)
    with qtbot.waitSignal(documents.indexing_finished, timeout=30_000):
        documents.download_button.click()
    assert window.models.remove(BGE_ID)
    context.apply_settings({"offline": True})  # "Offline" ticked in Settings

    window.use_model(window.models.import_file(tiny_chat))
    assert chat.current is not None
    chat.current.collection = "handbook"
    chat.current.max_tokens = 4
    chat.input.setPlainText("How many days of leave?")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(chat.send_button, _left())
    assert not chat.download_button.isHidden() and not chat.download_button.isEnabled()
    assert "Untick" in chat.download_button.toolTip()
    assert f"needs the embedding model {BGE_ID}" in chat.notice.text()
    assert "Untick" in chat.notice.text() and "Download it" not in chat.notice.text()
    assert len(bge_hub.downloads()) == 1  # only the first, before going offline
    window.close()
