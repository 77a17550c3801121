"""The window's export offers encryption; its import asks the passphrase back."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog

from desktop.root.context import AppContext
from desktop.store import _sealed as sealed
from desktop.store._chat_records import ChatMessage
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt
WORDS = ("zanzibarquokka", "机密病历", "clientnamehere")


def test_an_encrypted_export_from_the_window_holds_no_word_and_imports_back(
    qtbot, context: AppContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = context.chat_store
    conv = store.create_conversation(f"about {WORDS[2]}", "tiny-chat")
    store.add_message(conv.id, ChatMessage("user", f"{WORDS[0]} {WORDS[1]}"))
    win = MainWindow(context)
    qtbot.addWidget(win)
    chat = win.chat
    (stored,) = [c for c in chat.chats.chats() if c.store_id == conv.id]
    chat.chat_list.setCurrentIndex(
        chat._filter.mapFromSource(chat.chats.index(chat.chats.row_of(stored)))
    )
    target = tmp_path / f"chat{sealed.SEALED_SUFFIX}"
    offered: list[str] = []

    def save_as(_parent, _title, _name, filters):
        offered.append(filters)
        return str(target), filters.split(";;")[-1]

    answers = iter(
        [
            ("correct horse", True),
            ("correct horse", True),
            ("wrong horse", True),
            ("correct horse", True),
        ]
    )
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: next(answers))
    qtbot.mouseClick(chat.sidebar.export_button, Qt.MouseButton.LeftButton)
    assert "Encrypted" in offered[0]
    data = target.read_bytes()
    assert data.startswith(sealed.MAGIC)
    assert not [w for w in (*WORDS, "about") if w.encode() in data]

    assert chat.sidebar.import_file(str(target)) == []  # the wrong passphrase: nothing
    assert "passphrase does not open" in chat.notice.text()
    (added,) = chat.sidebar.import_file(str(target))
    assert added.title == f"about {WORDS[2]}"
    assert [m.content for m in store.get_messages(added.store_id)] == [f"{WORDS[0]} {WORDS[1]}"]
    win.close()
