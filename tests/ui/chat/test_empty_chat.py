"""A chat with no message yet says what to type, which model answers and whether what is
written leaves this device; Send waits for a model (the window walk found a blank area,
and Send live with no model chosen)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.root.context import AppContext
from desktop.ui.common.qmodels import ChatModelChoice
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def _open(qtbot, context: AppContext) -> MainWindow:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("chat")
    return win


def test_without_a_model_send_is_off_and_the_empty_chat_says_how_to_choose_one(
    qtbot, context: AppContext, tiny_chat: Path
) -> None:
    win = _open(qtbot, context)
    chat = win.chat
    assert chat.current is not None and chat.current.model == ""
    assert not chat.send_button.isEnabled()
    assert "Choose a model" in chat.send_button.toolTip()
    hint = chat.transcript.empty_hint
    assert hint.isVisible() and "Choose a model above" in hint.text()
    chat.input.setPlainText("hello")
    chat.composer.send_requested.emit()  # Ctrl+Enter all the same: nothing is sent
    assert chat.current.turns == [] and not chat.is_generating

    model_id = win.models.import_file(tiny_chat)
    win.use_model(model_id)
    assert chat.send_button.isEnabled() and chat.send_button.toolTip() == "Send (Ctrl+Enter)"
    assert model_id in hint.text() and "on this device" in hint.text()
    assert "Ctrl+Enter" in hint.text()
    send(qtbot, win, "hello")
    assert not hint.isVisible()  # the conversation is shown instead
    chat.new_chat()
    assert hint.isVisible() and model_id in hint.text()  # the new chat keeps the model
    assert chat.send_button.isEnabled()
    win.close()


def test_the_empty_chat_of_a_remote_model_says_it_leaves_this_device(
    qtbot, context: AppContext
) -> None:
    win = _open(qtbot, context)
    chat = win.chat
    chat.set_models(
        [ChatModelChoice("glm-4.6 (runs on gpu — leaves this device)", "gpu/glm-4.6", "gpu")]
    )
    assert chat.current is not None and chat.current.model == "gpu/glm-4.6"  # the only one
    text = chat.transcript.empty_hint.text()
    assert "glm-4.6" in text and "gpu" in text and "leaves this device" in text
    assert "stays" not in text
    assert chat.send_button.isEnabled()
    win.close()
