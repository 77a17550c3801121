"""A message far over the model's context: the window names its whole size and says what
to do, in window words (the real window, the tiny chat model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop.root.context import AppContext
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


def test_a_pasted_book_is_refused_with_its_whole_size_and_what_to_do(
    qtbot, context: AppContext, tiny_chat: Path
) -> None:
    # The window walk found "the prompt is more than 2579 tokens (counting stopped)" for
    # a paste forty times that, and advice to "load the model with a larger context".
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.use_model(win.models.import_file(tiny_chat))
    chat = win.chat
    book = "lorem ipsum dolor sit amet\n" * 8_000  # 216 KB, far over a 2,048 context
    chat.input.setPlainText(book)
    with qtbot.waitSignal(chat.error, timeout=60_000) as failed:
        chat.send()
    message = failed.args[0]
    found = re.match(r"This chat is far too long for the model: about ([\d,]+) tokens", message)
    assert found, message
    about = int(found.group(1).replace(",", ""))
    assert about > 10 * 2_048, message  # the whole paste's size, not where counting stopped
    assert "Start a new chat" in message and "--" not in message
    assert chat.notice.text() == message
    assert chat.input.toPlainText() == book.strip()  # the paste is back, to be shortened
    win.close()
