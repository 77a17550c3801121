"""Delete chat, then Undo: the chat comes back with its messages, for a few seconds."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.chat.scripted import Scripted
from tests.ui.conftest import send

pytestmark = pytest.mark.qt

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def _yes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user confirms each deletion."""
    monkeypatch.setattr(QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Yes)


def _delete(qtbot, win: MainWindow) -> None:
    qtbot.mouseClick(win.chat.sidebar.delete_button, LEFT)


def test_undo_brings_a_deleted_chat_back_with_its_messages_for_good(
    qtbot, window: MainWindow
) -> None:
    chat = window.chat
    chat.core.streamer = Scripted("First answer.", "Second answer.")
    send(qtbot, window, "First question")
    send(qtbot, window, "Second question")
    deleted = chat.current
    store = window.context.chat_store
    _delete(qtbot, window)
    assert deleted not in chat.chats.chats() and store.list_conversations() == []
    qtbot.waitUntil(chat.notes.undo_button.isVisible, timeout=2000)
    assert chat.notice.text() == "Deleted “First question”."

    qtbot.mouseClick(chat.notes.undo_button, LEFT)
    assert not chat.notes.undo_button.isVisible()
    assert chat.current is deleted and deleted in chat.chats.chats()
    assert [b.shown_markdown for b in chat._bubbles] == [
        "First question",
        "First answer.",
        "Second question",
        "Second answer.",
    ]
    [conv] = store.list_conversations()
    assert conv.title == "First question"
    assert [m.content for m in store.get_messages(conv.id)] == [
        "First question",
        "First answer.",
        "Second question",
        "Second answer.",
    ]
    send(qtbot, window, "Third question")  # it goes on where it was
    assert len(store.get_messages(conv.id)) == 6
    window.close()

    again = MainWindow(build_context(policy=NoPolicy()))  # and it is there after a restart
    qtbot.addWidget(again)
    assert "First question" in [c.title for c in again.chat.chats.chats()]
    again.close()


def test_undo_is_gone_after_the_next_action_or_a_few_seconds(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.core.streamer = Scripted("Answer.")
    send(qtbot, window, "One")
    _delete(qtbot, window)
    assert chat.notes.can_undo
    chat.new_chat()  # the user moved on
    assert not chat.notes.can_undo and not chat.notes.undo_button.isVisible()

    send(qtbot, window, "Two")
    _delete(qtbot, window)
    chat.notes.say("The model went away.")  # the line is about something else now
    assert not chat.notes.can_undo and not chat.notes.undo_button.isVisible()
    assert chat.notice.text() == "The model went away."

    send(qtbot, window, "Three")
    chat.notes._undo_timer.setInterval(50)  # not ten seconds in a test
    _delete(qtbot, window)
    qtbot.waitUntil(lambda: not chat.notes.undo_button.isVisible(), timeout=5000)
    assert not chat.notes.can_undo and not chat.notice.isVisible()
    assert "Three" not in [c.title for c in chat.chats.chats()]


def test_an_ephemeral_chat_comes_back_in_memory_only(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.core.streamer = Scripted("Secret answer.")
    fresh = chat.new_chat()
    qtbot.mouseClick(chat.ephemeral, LEFT)
    send(qtbot, window, "Secret")
    _delete(qtbot, window)
    qtbot.mouseClick(chat.notes.undo_button, LEFT)
    assert chat.current is fresh and fresh.ephemeral
    store = window.context.chat_store
    assert [c.ephemeral for c in store.list_conversations()] == [True]
    assert [b.shown_markdown for b in chat._bubbles] == ["Secret", "Secret answer."]
