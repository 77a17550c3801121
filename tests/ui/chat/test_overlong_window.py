"""A message far over the model's context: the window names its whole size and says what
to do, in window words (the real window, the tiny chat model)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QWidget

from desktop.ui.common.look import apply_theme
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


@pytest.fixture
def light(qapp) -> Iterator[None]:
    apply_theme(qapp, "light")
    yield
    qapp.setStyleSheet("")


def _red_pixels(widget: QWidget) -> int:
    """How many of the widget's pixels are drawn in a red (the error colour)."""
    image = widget.grab().toImage()
    return sum(
        1
        for y in range(image.height())
        for x in range(image.width())
        if (c := image.pixelColor(x, y)).red() - max(c.green(), c.blue()) > 60
    )


def test_a_pasted_book_is_refused_with_its_whole_size_and_what_to_do(
    qtbot, window: MainWindow, light: None
) -> None:
    # The window walk found "the prompt is more than 2579 tokens (counting stopped)" for
    # a paste forty times that, and advice to "load the model with a larger context".
    chat = window.chat
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
    # Drawn in the error red, not the grey of a passing note (the walk found it grey).
    assert _red_pixels(chat.notice) > 50
    chat.notes.say("Downloading tiny-chat…")
    assert _red_pixels(chat.notice) == 0
    assert chat.input.toPlainText() == book.strip()  # the paste is back, to be shortened
