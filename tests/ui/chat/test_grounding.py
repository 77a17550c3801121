"""A chat grounded in a document collection: sources reach the model, citations open files."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QTextDocumentFragment

from desktop.base.config import NoPolicy
from desktop.chat import Turn, cite
from desktop.retrieval._search import Hit
from desktop.root.context import build_context
from desktop.ui.chat.message import MessageWidget
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def read(tooltip: str) -> str:
    """The words a tooltip shows (Qt renders it as rich text)."""
    return QTextDocumentFragment.fromHtml(tooltip).toPlainText()


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
    button.click()  # the passage, in the window
    viewer = bubble.citations.viewer
    assert viewer is not None and viewer.isVisible() and opened.urls == []
    assert viewer.marked == (1, 3) and "Staff get 25 days" in viewer.marked_text()
    with qtbot.waitSignal(bubble.citations.opened, timeout=2000):
        viewer.open_button.click()  # then in the desktop's own viewer
    assert [u.toLocalFile() for u in opened.urls] == [str((docs / "leave.md").resolve())]
    # A new chat starts without documents (issue 50, item 11): grounding is picked, never
    # inherited unseen; the grounded chat keeps its collection.
    grounded_chat = chat.current
    chat.new_chat()
    assert chat.current is not grounded_chat and chat.current.collection == ""
    assert chat.collection_box.currentIndex() == 0
    assert grounded_chat.collection == "handbook"


def _hit(n: int, path: str, page: int | None, lines: tuple[int, int]) -> Hit:
    return Hit(n, "handbook", path, page, lines[0], lines[1], f"text {n}", 1.0)


def test_citations_in_an_answer_map_to_files_pages_and_lines(qtbot, opened, tmp_path: Path) -> None:
    travel, policy = tmp_path / "travel.txt", tmp_path / "policy.pdf"
    travel.write_text("trains")
    policy.write_bytes(b"%PDF-1.4")
    turn = Turn("assistant", "Leave is 25 days [2], trains under four hours [1, 2]. [7]")
    turn.sources = [_hit(1, str(travel), None, (4, 4)), _hit(2, str(policy), 3, (10, 14))]
    cite(turn)
    assert [c.number for c in turn.citations] == [2, 1]  # order of first use; [7] dropped
    bubble = MessageWidget(0, turn, last=True)
    qtbot.addWidget(bubble)
    bubble.show()
    assert bubble.citations.label.text() == "Sources:"
    first, second = bubble.citations.buttons
    assert first.text() == "[2] policy.pdf"
    assert read(first.toolTip()).startswith(f"{policy} p. 3, lines 10-14")
    assert read(second.toolTip()).startswith(f"{travel} line 4")
    with qtbot.assertNotEmitted(bubble.citations.unavailable):
        first.click()
        viewer = bubble.citations.viewer
        assert viewer is not None
        assert viewer.text.toPlainText() == "text 2"  # unreadable PDF: the stored passage
        assert "cannot be shown here" in viewer.note.text()
        viewer.open_button.click()
    assert [u.toLocalFile() for u in opened.urls] == [str(policy)]


@pytest.mark.parametrize(
    "path",
    [
        "\\\\attacker\\share\\x.pdf",  # a Windows network share: would send credentials
        "//attacker/share/x.pdf",
        "\\\\?\\UNC\\attacker\\share\\x.pdf",
        "relative/notes.txt",
        "/no/such/dir/gone.pdf",  # deleted or moved since
        "DIRECTORY",
    ],
)
def test_a_cited_file_that_is_not_here_is_not_opened_and_said(
    qtbot, window, opened, tmp_path: Path, path: str
) -> None:
    # Cited paths are stored with the chat, and a crafted chat export can set them.
    path = str(tmp_path) if path == "DIRECTORY" else path
    turn = Turn("assistant", "See [1].")
    turn.sources = [_hit(1, path, None, (1, 1))]
    cite(turn)
    window.chat.current.turns = [Turn("user", "?"), turn]
    window.chat._rebuild_transcript()
    row = window.chat._bubbles[-1].citations
    with qtbot.assertNotEmitted(row.opened):
        row.buttons[0].click()
    assert opened.urls == []
    viewer = row.viewer  # the passage as it was cited, from the chat
    assert viewer is not None and viewer.text.toPlainText() == "text 1"
    assert not viewer.open_button.isEnabled() and viewer.note.isVisible()
    notice = window.chat.notice
    assert not notice.isHidden()
    assert notice.text() == f"The cited file is not on this computer any more: {path}"


def test_markup_in_a_cited_document_is_shown_as_text(qtbot) -> None:
    # A document (or an imported chat) could hold markup that would fetch an image or
    # restyle the tooltip if Qt read it as HTML.
    turn = Turn("assistant", "See [1].")
    snippet = '<img src="http://x/y.png"> <b>bold</b> & more'
    turn.sources = [Hit(1, "handbook", "/docs/<b>a</b>.md", None, 1, 2, snippet, 1.0)]
    cite(turn)
    bubble = MessageWidget(0, turn, last=True)
    qtbot.addWidget(bubble)
    tip = bubble.citations.buttons[0].toolTip()
    assert "<img" not in tip and "<b>" not in tip and "&lt;img" in tip
    assert read(tip) == f"/docs/<b>a</b>.md lines 1-2\n\n{snippet}"


def test_a_missing_collection_with_markup_in_its_name_is_named_as_text(qtbot, window) -> None:
    # The name comes from the store, where an imported chat export can put anything.
    from desktop.chat import Conversation

    name = '<img src="file:///etc/x.png"><b>docs</b>'
    header = window.chat.header
    header.set_collections([])
    header.show_chat(Conversation(model="m", collection=name))
    tip = header.collection_box.toolTip()
    assert "<img" not in tip and f"“{name}” this chat used no longer exists" in read(tip)
    notice = window.chat.notice
    assert notice.textFormat() == Qt.TextFormat.PlainText and f"“{name}”" in notice.text()


def test_a_chat_without_documents_shows_no_sources(qtbot, window) -> None:
    answer = send(qtbot, window, "Hello", max_tokens=4)
    assert answer.sources == [] and answer.citations == []
    assert window.chat._bubbles[-1].citations.isHidden()


# ---------------------------------------------------------------- across a restart
def reopen(qtbot, tiny_chat: Path) -> MainWindow:
    """A new window on the same EDGEDESK_HOME: what the user sees after a restart."""
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    win.models.import_file(tiny_chat)
    return win


def show_stored(win: MainWindow, store_id: int) -> None:
    """Click the stored chat in the sidebar."""
    chats = win.chat.chats
    chat = next(c for c in chats.chats() if c.store_id == store_id)
    win.chat.chat_list.setCurrentIndex(
        win.chat._filter.mapFromSource(chats.index(chats.row_of(chat)))
    )
    assert win.chat.current is chat


def shown_citations(win: MainWindow) -> tuple[str, list[tuple[str, str]]]:
    row = win.chat._bubbles[-1].citations
    if row.isHidden():
        return "", []
    return row.label.text(), [(b.text(), read(b.toolTip())) for b in row.buttons]


def ask_grounded(qtbot, win: MainWindow, question: str = "How many days of leave?") -> int:
    chat = win.chat
    chat.collection_box.setCurrentIndex(chat.collection_box.findData("handbook"))
    send(qtbot, win, question, max_tokens=8)
    assert chat.current is not None and chat.current.store_id is not None
    return chat.current.store_id


def test_the_collection_and_citations_survive_a_restart(
    qtbot, grounded, tiny_chat: Path, opened
) -> None:
    win, docs = grounded
    store_id = ask_grounded(qtbot, win)
    before = shown_citations(win)
    assert before[1][0][0] == "[1] leave.md"
    win.close()

    again = reopen(qtbot, tiny_chat)
    show_stored(again, store_id)
    assert again.chat.collection_box.currentData() == "handbook"
    assert again.chat.current.collection == "handbook"
    assert shown_citations(again) == before
    row = again.chat._bubbles[-1].citations
    row.buttons[0].click()
    assert row.viewer is not None and "Staff get 25 days" in row.viewer.marked_text()
    row.viewer.open_button.click()
    assert [u.toLocalFile() for u in opened.urls] == [str((docs / "leave.md").resolve())]
    again.chat.collection_box.setCurrentIndex(0)  # 'No documents' is kept too
    assert again.context.chat_store.get_conversation(store_id).collection is None
    again.close()


def test_a_deleted_collection_is_shown_as_none_and_said(qtbot, grounded, tiny_chat: Path) -> None:
    win, _docs = grounded
    store_id = ask_grounded(qtbot, win)
    before = shown_citations(win)
    win.close()

    again = reopen(qtbot, tiny_chat)
    show_stored(again, store_id)
    assert again.chat.collection_box.currentData() == "handbook"
    again.context.library.remove("handbook")  # deleted while the chat is open
    again.documents.refresh()
    assert again.chat.collection_box.currentIndex() == 0
    assert "“handbook”" in again.chat.notice.text() and not again.chat.notice.isHidden()
    again.close()

    third = reopen(qtbot, tiny_chat)  # and after another restart: the last chat again
    assert third.chat.current is not None and third.chat.current.store_id == store_id
    show_stored(third, store_id)
    box = third.chat.collection_box
    assert box.currentIndex() == 0 and third.chat.current.collection == ""
    assert "“handbook” this chat used no longer exists" in read(box.toolTip())
    assert "“handbook”" in third.chat.notice.text() and not third.chat.notice.isHidden()
    assert shown_citations(third) == before  # what the answer was given is still listed
    third.use_model("tiny-chat")
    answer = send(qtbot, third, "And sick days?", max_tokens=4)
    assert answer.sources == []  # no longer grounded
    box.setCurrentIndex(0)
    assert box.toolTip() == "Answer from a document collection, with numbered citations"
    third.close()


def test_regenerate_and_edit_replace_the_stored_sources(qtbot, grounded) -> None:
    win, _docs = grounded
    chat, store = win.chat, win.context.chat_store
    ask_grounded(qtbot, win)

    def stored() -> list[tuple[str, list[str]]]:
        assert chat.current is not None and chat.current.store_id is not None
        return [
            (m.role, [Path(s.path).name for s in m.sources])
            for m in store.get_messages(chat.current.store_id)
        ]

    assert stored() == [("user", []), ("assistant", ["leave.md"])]
    chat.collection_box.setCurrentIndex(0)
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        chat.regenerate()
    assert stored() == [("user", []), ("assistant", [])]
    assert shown_citations(win) == ("", [])

    chat.collection_box.setCurrentIndex(chat.collection_box.findData("handbook"))
    chat.edit(0)
    chat.input.setPlainText("Days of paid leave?")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        chat.send()
    assert stored() == [("user", []), ("assistant", ["leave.md"])]
    [conv] = store.list_conversations()
    assert conv.collection == "handbook"


def test_an_ephemeral_grounded_chat_keeps_its_sources_while_open(qtbot, grounded) -> None:
    win, _docs = grounded
    win.chat.ephemeral.setChecked(True)
    store_id = ask_grounded(qtbot, win)
    assert store_id < 0  # the store's in-memory part
    store = win.context.chat_store
    assert store.get_conversation(store_id).collection == "handbook"
    assert [Path(s.path).name for s in store.get_messages(store_id)[1].sources] == ["leave.md"]


def test_cited_sources_come_back_as_cited(qtbot) -> None:
    from desktop.base.config import Paths
    from desktop.chat import ChatSaver, Conversation
    from desktop.store._chats import ChatStore

    path = Paths.from_env().database
    store = ChatStore(path)
    chat = Conversation(model="m", collection="handbook")
    answer = Turn("assistant", "Leave is 25 days [2].")
    answer.sources = [
        _hit(1, "/docs/travel.txt", None, (4, 4)),
        _hit(2, "/docs/policy.pdf", 3, (10, 14)),
    ]
    chat.turns = [Turn("user", "Leave?"), answer]
    ChatSaver(store).sync(chat, 2)
    store.close()

    store = ChatStore(path)
    saver = ChatSaver(store)
    [restored] = saver.load_all()
    assert restored.collection == "handbook"
    saver.load_turns(restored)
    turn = restored.turns[1]
    assert [(c.number, c.path, c.page) for c in turn.citations] == [(2, "/docs/policy.pdf", 3)]
    assert [s.cited for s in store.get_messages(restored.store_id)[1].sources] == [False, True]
    bubble = MessageWidget(1, turn, last=True)
    qtbot.addWidget(bubble)
    assert bubble.citations.label.text() == "Sources:"
    assert [b.text() for b in bubble.citations.buttons] == ["[2] policy.pdf"]
    store.close()


def test_a_cited_file_no_program_opens_is_said(qtbot, window, tmp_path: Path) -> None:
    # Offscreen Qt, like a desktop with no handler for the file type, opens nothing.
    policy = tmp_path / "policy.xyz"
    policy.write_text("Staff get 25 days of paid leave a year.\n")
    turn = Turn("assistant", "See [1].")
    turn.sources = [_hit(1, str(policy), None, (1, 1))]
    cite(turn)
    window.chat.current.turns = [Turn("user", "?"), turn]
    window.chat._rebuild_transcript()
    row = window.chat._bubbles[-1].citations
    row.buttons[0].click()  # the passage, in the window
    assert row.viewer is not None and "cannot be shown here" in row.viewer.note.text()
    with qtbot.waitSignal(row.unavailable, timeout=2000):
        row.viewer.open_button.click()
    assert not window.chat.notice.isHidden()
    assert window.chat.notice.text() == (
        f"No program on this computer opens this file; open it yourself: {policy}"
    )
