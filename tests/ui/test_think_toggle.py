"""The per-chat Think switch: shown for reasoning models, and it reaches the template."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.ui.main_window import MainWindow
from tests.fixtures.tiny_gguf import TINY_TEMPLATE, write_tiny_llama
from tests.ui.conftest import send

pytestmark = pytest.mark.qt

# Like GLM's, this template writes more of the prompt when thinking is switched off.
THINKING_TEMPLATE = TINY_TEMPLATE + (
    "{% if enable_thinking is defined and not enable_thinking %}"
    "<think></think>the cat is the dog of the world{% endif %}")


def test_think_switch_is_per_chat_and_reaches_the_template(qtbot, window: MainWindow,
                                                           tmp_path: Path) -> None:
    header = window.chat.header
    assert not header.think.isVisible()  # the plain tiny model does not reason
    thinker = window.models.import_file(
        write_tiny_llama(tmp_path / "thinker.gguf", chat_template=THINKING_TEMPLATE))
    window.use_model(thinker)
    assert header.think.isVisible() and header.think.isChecked()
    thinking = send(qtbot, window, "hello", max_tokens=2)

    quiet_chat = window.chat.new_chat()
    window.use_model(thinker)
    qtbot.mouseClick(header.think, _left())  # untick: answer at once
    assert not quiet_chat.think
    quiet = send(qtbot, window, "hello", max_tokens=2)
    assert quiet.usage.prompt_tokens > thinking.usage.prompt_tokens + 5

    # The first chat kept its own setting.
    first = next(c for c in window.chat.chats.chats() if c is not quiet_chat)
    window.chat.select(first)
    assert first.think and header.think.isChecked()


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
