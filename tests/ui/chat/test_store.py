"""Chats survive a restart through the store; ephemeral ones never reach the disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def reopen(qtbot, tiny_chat: Path) -> MainWindow:
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.models.import_file(tiny_chat)
    return win


def stored_rows(win: MainWindow) -> list:
    return [c for c in win.chat.chats.chats() if c.store_id is not None]


def test_a_chat_is_there_after_a_restart(qtbot, window: MainWindow, tiny_chat: Path) -> None:
    window.chat.system_prompt.setText("Be brief.")
    window.chat.system_prompt.textEdited.emit("Be brief.")
    answer = send(qtbot, window, "remember the giraffe")
    footer = window.chat._bubbles[1].footer.text()
    window.close()

    again = reopen(qtbot, tiny_chat)
    (chat,) = stored_rows(again)
    assert chat.title == "remember the giraffe" and chat.model == "tiny-chat"
    row = again.chat._filter.mapFromSource(again.chat.chats.index(again.chat.chats.row_of(chat)))
    again.chat.chat_list.setCurrentIndex(row)
    assert [t.content for t in again.chat.current.turns] == ["remember the giraffe", answer.content]
    assert again.chat.current.turns[1].usage.completion_tokens == answer.usage.completion_tokens
    assert again.chat.system_prompt.text() == "Be brief."
    # The line under the answer reads as it did when the answer was new, where it ran
    # included (the window walk found "CPU only" gone after a restart).
    assert "tok/s" in footer and "CPU only" in footer
    assert again.chat._bubbles[1].footer.text() == footer
    again.chat.search.setText("giraffe")  # finds chats by their messages, not only titles
    qtbot.waitUntil(lambda: again.chat._filter.rowCount() == 1, timeout=2000)
    again.chat.search.setText("zebra")
    qtbot.waitUntil(lambda: again.chat._filter.rowCount() == 0, timeout=2000)
    again.close()


def test_a_stopped_answer_is_saved_with_what_was_generated(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.current.max_tokens = 1900
    chat.input.setPlainText("go on")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as finished:
        chat.send()
        qtbot.waitUntil(lambda: bool(chat.current.turns[-1].content), timeout=20_000)
        qtbot.mouseClick(chat.stop_button, Qt.MouseButton.LeftButton)
    saved = window.context.chat_store.get_messages(chat.current.store_id)
    assert [m.role for m in saved] == ["user", "assistant"]
    assert saved[1].content == finished.args[0].content != ""


def test_edits_renames_and_deletes_reach_the_store(qtbot, window: MainWindow) -> None:
    store = window.context.chat_store
    chat = window.chat
    send(qtbot, window, "one")
    send(qtbot, window, "two")
    chat.edit(0)
    chat.input.setPlainText("uno")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        chat.send()
    messages = store.get_messages(chat.current.store_id)
    assert [m.content for m in messages if m.role == "user"] == ["uno"]
    assert len(store.list_conversations()) == 1

    index = chat.chats.index(chat.chats.row_of(chat.current))
    chat.chats.setData(index, "Numbers")
    assert store.get_conversation(chat.current.store_id).title == "Numbers"
    chat.delete_current()
    assert store.list_conversations() == []


def test_ephemeral_chats_never_reach_the_disk(qtbot, window: MainWindow, tiny_chat: Path) -> None:
    window.chat.ephemeral.setChecked(True)
    send(qtbot, window, "secret pineapple")
    assert window.chat.current.store_id < 0  # the store's in-memory part
    assert not window.chat.ephemeral.isEnabled()
    window.close()
    database = window.context.paths.database
    assert b"pineapple" not in database.read_bytes()
    again = reopen(qtbot, tiny_chat)
    assert stored_rows(again) == []
    again.close()


def test_the_windows_export_is_the_stores_with_reasoning_and_sources(
    qtbot, context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    from desktop.store._chat_records import ChatMessage
    from desktop.store._cited_passages import Source

    store = context.chat_store
    conv = store.create_conversation("Leave", "tiny-chat", collection="handbook")
    store.add_message(conv.id, ChatMessage("user", "How much leave?"))
    store.add_message(
        conv.id,
        ChatMessage(
            "assistant",
            "25 days [1].",
            reasoning="Look in the handbook.",
            model="tiny-chat",
            sources=(Source(1, "/docs/leave.md", None, 3, 3, "25 days", cited=True),),
        ),
    )
    win = MainWindow(context)
    qtbot.addWidget(win)
    chat = win.chat
    (stored,) = [c for c in chat.chats.chats() if c.store_id == conv.id]
    chat.chat_list.setCurrentIndex(
        chat._filter.mapFromSource(chat.chats.index(chat.chats.row_of(stored)))
    )
    target = tmp_path / "leave.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(chat.sidebar.export_button, Qt.MouseButton.LeftButton)
    text = target.read_text(encoding="utf-8")
    assert text == store.export_markdown([conv.id])  # what `edgedesk chats export` writes
    assert "**Sources:**" in text and "[1] leave.md" in text and "— cited" in text
    assert "> Look in the handbook." in text and "Documents: handbook" in text
    win.close()


def test_exporting_an_empty_chat_says_there_is_nothing_to_export(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    asked: list[object] = []
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: asked.append(a) or ("/tmp/never.md", "")
    )
    qtbot.mouseClick(window.chat.sidebar.export_button, Qt.MouseButton.LeftButton)
    assert asked == []  # no file chosen, none written
    assert window.chat.notice.isVisible()
    assert window.chat.notice.text() == "Nothing to export: this chat has no messages yet."


def test_an_ephemeral_chat_exports_from_memory(qtbot, window: MainWindow) -> None:
    window.chat.ephemeral.setChecked(True)
    answer = send(qtbot, window, "secret pineapple")
    text = window.chat.sidebar.export_markdown()
    assert text is not None and "secret pineapple" in text and answer.content in text


def test_typing_a_search_queries_the_store_once_it_pauses(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    send(qtbot, window, "remember the giraffe")
    store = window.context.chat_store
    queries: list[str | None] = []
    listed = store.list_conversations
    monkeypatch.setattr(
        store, "list_conversations", lambda search=None: (queries.append(search), listed(search))[1]
    )
    window.chat.new_chat()
    qtbot.keyClicks(window.chat.search, "giraf")
    assert queries == []  # nothing while typing
    qtbot.waitUntil(lambda: queries == ["giraf"], timeout=2000)
    assert window.chat._filter.rowCount() == 1
    qtbot.wait(300)
    assert queries == ["giraf"]
