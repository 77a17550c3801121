"""A model without a chat template, asked in the window: the error says what to do there,
with no command-line flag in it (the window walk found "… or use --raw for plain text
completion", which only ``edgedesk run`` has)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.root.context import AppContext
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


def _window_with(qtbot, context: AppContext, model: Path) -> MainWindow:
    """The window shown, with ``model`` imported and chosen for the chat."""
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.use_model(win.models.import_file(model))
    return win


def test_a_model_without_a_template_fails_in_the_window_without_a_cli_flag(
    qtbot, context: AppContext, tiny_chat_no_template: Path
) -> None:
    win = _window_with(qtbot, context, tiny_chat_no_template)
    chat = win.chat
    chat.input.setPlainText("hello")
    with qtbot.waitSignal(chat.error, timeout=30_000) as failed:
        chat.send()
    message = failed.args[0]
    assert "no chat template" in message and "models.toml" in message
    assert "--raw" not in message
    assert chat.notice.text() == message  # said above the message box
    win.close()


def test_a_question_that_failed_comes_back_to_the_composer_and_is_never_asked_twice(
    qtbot, context: AppContext, tiny_chat_no_template: Path
) -> None:
    # The window walk found a failed question left in the chat with an empty composer:
    # typed again and sent, the chat held it twice (and a strict template then refuses
    # two questions in a row).
    win = _window_with(qtbot, context, tiny_chat_no_template)
    chat = win.chat
    chat.input.setPlainText("hello")
    with qtbot.waitSignals([chat.error, chat.generation_finished], timeout=30_000):
        chat.send()
    assert chat.input.toPlainText() == "hello"  # ready to send again
    assert chat.input.textCursor().position() == len("hello")  # typing adds to its end
    with qtbot.waitSignals([chat.error, chat.generation_finished], timeout=30_000):
        chat.send()  # the same again
    chat.input.setPlainText("hello, with more words")
    with qtbot.waitSignals([chat.error, chat.generation_finished], timeout=30_000):
        chat.send()  # changed
    assert chat.current is not None
    assert [(t.role, t.content) for t in chat.current.turns] == [("user", "hello, with more words")]
    assert chat.input.toPlainText() == "hello, with more words"
    win.close()
