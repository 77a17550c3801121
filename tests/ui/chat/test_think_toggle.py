"""The per-chat Think switch: shown for reasoning models, and it reaches the template."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.tiny_gguf import TINY_TEMPLATE, write_tiny_llama
from tests.ui.conftest import send

pytestmark = pytest.mark.qt

# Like GLM's, this template writes more of the prompt when thinking is switched off.
THINKING_TEMPLATE = TINY_TEMPLATE + (
    "{% if enable_thinking is defined and not enable_thinking %}"
    "<think></think>the cat is the dog of the world{% endif %}"
)


def test_think_switch_is_per_chat_and_reaches_the_template(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    header = window.chat.header
    assert not header.think.isVisible()  # the plain tiny model does not reason
    thinker = window.models.import_file(
        write_tiny_llama(tmp_path / "thinker.gguf", chat_template=THINKING_TEMPLATE)
    )
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


def test_the_think_switch_is_remembered_after_a_restart(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context

    model = write_tiny_llama(tmp_path / "thinker.gguf", chat_template=THINKING_TEMPLATE)
    window.use_model(window.models.import_file(model))
    header = window.chat.header
    qtbot.mouseClick(header.think, _left())  # untick before the chat is saved
    send(qtbot, window, "answer at once", max_tokens=2)
    other = window.chat.new_chat()
    send(qtbot, window, "think first", max_tokens=2)
    qtbot.mouseClick(header.think, _left())  # untick after it is saved ...
    qtbot.mouseClick(header.think, _left())  # ... and tick again
    assert other.think
    window.close()

    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    again.show()
    again.models.import_file(model)
    saved = {c.title: c for c in again.chat.chats.chats() if c.store_id is not None}
    again.chat.select(saved["answer at once"])
    assert again.chat.header.think.isVisible() and not again.chat.header.think.isChecked()
    again.chat.select(saved["think first"])
    assert again.chat.header.think.isChecked()
    again.close()


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
