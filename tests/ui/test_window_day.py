"""Small things a day in the window runs into (issue 24, items 8–16)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.ui.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def _answer(monkeypatch: pytest.MonkeyPatch, button: QMessageBox.StandardButton) -> list[str]:
    asked: list[str] = []

    def question(_parent: object, _title: str, text: str, *_a: object) -> object:
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_deleting_a_chat_asks_first(qtbot, window: MainWindow,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    chat = window.chat
    send(qtbot, window, "keep me")
    kept = chat.current
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(chat.sidebar.delete_button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and "cannot be undone" in asked[0]
    assert chat.current is kept and kept in chat.chats.chats()  # said no: still there
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(chat.sidebar.delete_button, Qt.MouseButton.LeftButton)
    assert kept not in chat.chats.chats()
    empty = chat.current
    assert empty is not None and not empty.turns
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    chat.new_chat()
    qtbot.mouseClick(chat.sidebar.delete_button, Qt.MouseButton.LeftButton)
    assert asked == []  # nothing to lose: an empty chat goes at once


def test_an_ephemeral_chat_says_so_however_long_its_title(qtbot, window: MainWindow) -> None:
    chat = window.chat
    saved = chat.current
    send(qtbot, window, "a saved chat with a long first message that becomes its title")
    assert not chat.header.ephemeral_banner.isVisible()
    fresh = chat.new_chat()
    qtbot.mouseClick(chat.ephemeral, Qt.MouseButton.LeftButton)
    assert fresh.ephemeral and chat.header.ephemeral_banner.isVisible()
    send(qtbot, window, "an ephemeral chat with a long first message that becomes its title")
    row = chat.chats.chats().index(fresh)
    shown = chat.chats.index(row, 0).data()
    assert shown.startswith("⌀ ")  # the marker leads: eliding the title cannot cut it off
    assert chat.chats.index(row, 0).data(Qt.ItemDataRole.EditRole) == fresh.title
    chat.select(saved)  # type: ignore[arg-type]
    assert not chat.header.ephemeral_banner.isVisible()
    chat.select(fresh)
    assert chat.header.ephemeral_banner.isVisible()
