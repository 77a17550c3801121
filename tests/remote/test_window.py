"""The window offers remote models with their badge, and a chat with one is saved locally."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.base.config import NoPolicy
from desktop.remote import keyring_set
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from tests.remote.fake_openai import FAILURE, Fake
from tests.ui.conftest import send

pytestmark = [pytest.mark.qt, pytest.mark.usefixtures("gui_thread_gc")]


def test_remote_models_carry_the_leaves_this_device_badge(
    qtbot: Any, fake: Fake, context: AppContext
) -> None:
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    win = MainWindow(context)
    qtbot.addWidget(win)
    box = win.chat.model_box
    qtbot.waitUntil(lambda: box.findData("gpu/echo") >= 0, timeout=20_000)
    assert box.itemText(box.findData("gpu/echo")) == "echo (runs on gpu — leaves this device)"
    box.setCurrentIndex(box.findData("gpu/echo"))  # as the user picks it
    send(qtbot, win, "kept on this device")
    saved = [c for c in context.chat_store.list_conversations() if c.model == "gpu/echo"]
    assert len(saved) == 1
    assert [m.content for m in context.chat_store.get_messages(saved[0].id)] == [
        "kept on this device",
        "kept on this device ",
    ]
    win.close()


def test_an_answer_that_breaks_off_keeps_its_words_and_says_why(
    qtbot: Any, fake: Fake, context: AppContext
) -> None:
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    win = MainWindow(context)
    qtbot.addWidget(win)
    box = win.chat.model_box
    qtbot.waitUntil(lambda: box.findData("gpu/fails") >= 0, timeout=20_000)
    box.setCurrentIndex(box.findData("gpu/fails"))
    send(qtbot, win, "hi")
    assert win.chat.current is not None
    assert win.chat.current.turns[-1].content == "hi again "  # what came before the failure
    assert (
        win.chat.transcript.bubbles[-1].footer.text()
        == f"broken off: remote 'gpu' failed mid-answer: {FAILURE}"
    )
    # Said once, under the answer (issue 50, item 18): not again above the input.
    assert win.chat.notice.isHidden() or FAILURE not in win.chat.notice.text()
    win.close()

    # Reopened, the chat shows the words that came and that the answer broke off.
    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    [stored] = [c for c in again.chat.chats.chats() if c.model == "gpu/fails"]
    again.chat.select(stored)
    assert [t.content for t in stored.turns] == ["hi", "hi again "]
    assert (
        again.chat.transcript.bubbles[-1].footer.text()
        == f"broken off: remote 'gpu' failed mid-answer: {FAILURE}"
    )
    again.close()
