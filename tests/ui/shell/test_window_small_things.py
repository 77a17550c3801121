"""The small things people notice in the window (issue 37): "Copied", one empty chat,
rename with the whole title, sensible context steps, window words when offline, and a
broken model file said in the user's words."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QToolTip

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import CAT_ID, send, wait_listed

pytestmark = pytest.mark.qt
LEFT = Qt.MouseButton.LeftButton


def test_copy_says_copied(qtbot, window: MainWindow) -> None:
    turn = send(qtbot, window, "Say hi", max_tokens=8)
    bubble = window.chat._bubbles[-1]
    qtbot.mouseClick(bubble.copy_button, LEFT)
    assert QGuiApplication.clipboard().text() == turn.content
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == "Copied", timeout=3000)
    window.show_page("server")
    copy = window.server.copy_address
    qtbot.mouseClick(copy, LEFT)
    assert copy.text() == "Copied"  # on the button itself, where the eye is
    qtbot.waitUntil(lambda: copy.text() == "Copy address", timeout=5000)  # then back


def test_new_chat_twice_leaves_one_empty_chat(qtbot, window: MainWindow) -> None:
    chat = window.chat
    before = chat.chats.rowCount()
    first = chat.current
    qtbot.mouseClick(chat.sidebar.new_button, LEFT)
    qtbot.mouseClick(chat.sidebar.new_button, LEFT)
    assert chat.chats.rowCount() == before and chat.current is first  # still the one
    send(qtbot, window, "Hello", max_tokens=4)
    qtbot.mouseClick(chat.sidebar.new_button, LEFT)
    qtbot.mouseClick(chat.sidebar.new_button, LEFT)
    assert chat.chats.rowCount() == before + 1 and not chat.current.turns


def test_rename_by_f2_and_context_menu_shows_the_whole_title(qtbot, window: MainWindow) -> None:
    chat = window.chat
    long_title = "Quarterly budget review with the finance team and the two new hires"
    chat.current.title = long_title
    sidebar = chat.sidebar
    sidebar.chat_list.setFocus()
    qtbot.keyClick(sidebar.chat_list, Qt.Key.Key_F2)
    dialog = sidebar.rename_dialog
    assert dialog is not None and dialog.isVisible()
    from PySide6.QtWidgets import QLineEdit

    box = dialog.findChild(QLineEdit)
    assert box.text() == long_title
    qtbot.waitUntil(
        lambda: box.fontMetrics().horizontalAdvance(long_title) < box.contentsRect().width()
    )
    box.setText("Budget")
    dialog.accept()
    assert chat.current.title == "Budget"
    # The context menu offers it too.
    rect = sidebar.chat_list.visualRect(sidebar.chat_list.currentIndex())
    sidebar._menu(rect.center())
    labels = [a.text() for a in sidebar.menu.actions()]
    sidebar.menu.close()
    assert any(label.startswith("Rename") for label in labels)


def test_context_length_steps_in_sensible_values(qtbot, window: MainWindow) -> None:
    window.context.resolver  # noqa: B018  # built: the model's trained context is known
    chat = window.chat
    chat.header.show_chat(chat.current)
    box = chat.header.parameters.context
    trained = window.trained_context(chat.current.model)
    assert trained is not None and box.maximum() == trained
    box.setFocus()
    seen = [box.text()]
    for _ in range(12):
        qtbot.keyClick(box, Qt.Key.Key_Up)
        seen.append(box.text())
    expected = ["Auto"] + [str(n) for n in (512, 1024, 2048, 4096, 8192, 16384, 32768)]
    ladder = [v for v in expected if v == "Auto" or int(v) < trained] + [str(trained)]
    assert seen[: len(ladder)] == ladder and set(seen[len(ladder) :]) <= {str(trained)}
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.text() == ladder[-2]
    box.setValue(1500)  # typed: kept, and the arrows go on to the next step
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.value() == 2048 <= trained


def test_offline_refusals_speak_the_windows_language(qtbot, edgedesk_home: Path, hub) -> None:
    # Offline ticked in Settings: the remedy is there (each other cause has its own,
    # tests/ui/models/test_offline_buttons.py).
    (edgedesk_home / "config").mkdir(parents=True, exist_ok=True)
    (edgedesk_home / "config" / "settings.toml").write_text("offline = true\n", encoding="utf-8")
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    wait_listed(qtbot, win)
    with qtbot.waitSignal(win.models.error, timeout=5000) as error:
        win.models.download(CAT_ID)
    text = error.args[0]
    assert "offline" in text.lower() and "Settings" in text
    assert "EDGEDESK_OFFLINE" not in text and "--offline" not in text
    win.close()


def test_a_broken_model_file_is_said_in_the_users_words(
    qtbot, window: MainWindow, tiny_chat: Path, tmp_path: Path
) -> None:
    cut = tmp_path / "my-model.gguf"
    cut.write_bytes(tiny_chat.read_bytes()[:4096])
    with qtbot.waitSignal(window.models.error, timeout=10_000) as error:
        window.models.import_later(cut)
    text = error.args[0]
    assert "my-model.gguf" in text and "Download it again" in text
    assert "truncated (" not in text and "struct" not in text
    qtbot.waitUntil(lambda: "my-model.gguf" in window.models.status.text(), timeout=5000)


def test_ctrl_q_in_the_message_box_asks_then_quits(qtbot, window: MainWindow) -> None:
    # The window walk pressed Ctrl+Q while typing a question: nothing happened.
    chat = window.chat
    chat.current.max_tokens = 4000  # type: ignore[union-attr]
    chat.input.setPlainText("Tell me a long story")
    qtbot.mouseClick(chat.send_button, LEFT)
    assert chat.is_generating
    chat.input.setFocus()
    qtbot.keyClick(chat.input, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    box = window.quit_box
    assert box is not None and box.isVisible() and window.isVisible()  # asked first
    assert "answer being written stops" in box.text()
    quit_button = next(b for b in box.buttons() if b.text() == "&Quit")
    qtbot.mouseClick(quit_button, LEFT)
    assert not window.isVisible() and window._closed  # shut down: the answer stopped
