"""A chat grounded in a document collection: sources reach the model, citations open files."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from desktop.app import build_context
from desktop.config import NoPolicy
from desktop.retrieval.search import Hit
from desktop.ui.conversations import Turn
from desktop.ui.grounding import cite
from desktop.ui.main_window import MainWindow
from desktop.ui.message_widget import MessageWidget
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


class Opened(QObject):
    """Stands in for the desktop's file viewer: records the URLs it was asked to open."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


@pytest.fixture
def opened():
    viewer = Opened()
    QDesktopServices.setUrlHandler("file", viewer, "open")
    yield viewer
    QDesktopServices.unsetUrlHandler("file")


@pytest.fixture
def grounded(qtbot, edgedesk_home: Path, tiny_embed: Path, tiny_chat: Path, tmp_path: Path):
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(f'embedding_model = "{tiny_embed}"\n')
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nStaff get 25 days of paid leave a year.\n")
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    win.use_model(win.models.import_file(tiny_chat))
    with qtbot.waitSignal(win.documents.indexing_finished, timeout=30_000):
        win.documents.add("handbook", [docs])
    yield win, docs
    win.close()


def test_a_grounded_chat_gives_the_model_numbered_sources(qtbot, grounded, opened) -> None:
    win, docs = grounded
    chat = win.chat
    number = chat.collection_box.findData("handbook")
    assert number > 0
    chat.collection_box.setCurrentIndex(number)
    assert chat.current is not None and chat.current.collection == "handbook"
    answer = send(qtbot, win, "How many days of leave?", max_tokens=8)
    assert answer is not None
    assert [Path(h.path).name for h in answer.sources] == ["leave.md"]
    # The tiny model cannot cite, so the sources it was given are listed instead.
    bubble = chat._bubbles[-1]
    assert not bubble.citations.isHidden()
    assert bubble.citations.label.text() == "Sources given (none cited):"
    button = bubble.citations.buttons[0]
    assert button.text() == "[1] leave.md" and "lines 1-3" in button.toolTip()
    with qtbot.waitSignal(bubble.citations.opened, timeout=2000):
        button.click()
    assert [u.toLocalFile() for u in opened.urls] == [str((docs / "leave.md").resolve())]
    # A new chat keeps the grounding; 'No documents' turns it off.
    chat.new_chat()
    assert chat.current.collection == "handbook"
    chat.collection_box.setCurrentIndex(0)
    assert chat.current.collection == ""


def _hit(n: int, path: str, page: int | None, lines: tuple[int, int]) -> Hit:
    return Hit(n, "handbook", path, page, lines[0], lines[1], f"text {n}", 1.0)


def test_citations_in_an_answer_map_to_files_pages_and_lines(qtbot, opened) -> None:
    turn = Turn("assistant", "Leave is 25 days [2], trains under four hours [1, 2]. [7]")
    turn.sources = [_hit(1, "/docs/travel.txt", None, (4, 4)),
                    _hit(2, "/docs/policy.pdf", 3, (10, 14))]
    cite(turn)
    assert [c.number for c in turn.citations] == [2, 1]  # order of first use; [7] dropped
    bubble = MessageWidget(0, turn, last=True)
    qtbot.addWidget(bubble)
    bubble.show()
    assert bubble.citations.label.text() == "Sources:"
    first, second = bubble.citations.buttons
    assert first.text() == "[2] policy.pdf"
    assert first.toolTip().startswith("/docs/policy.pdf p. 3, lines 10-14")
    assert second.toolTip().startswith("/docs/travel.txt line 4")
    first.click()
    assert [u.toLocalFile() for u in opened.urls] == ["/docs/policy.pdf"]


def test_a_chat_without_documents_shows_no_sources(qtbot, window) -> None:
    answer = send(qtbot, window, "Hello", max_tokens=4)
    assert answer.sources == [] and answer.citations == []
    assert window.chat._bubbles[-1].citations.isHidden()
