"""The window offers remote models with their badge, and a chat with one is saved locally."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.app import build_context
from desktop.config import NoPolicy
from desktop.remote.registry import keyring_set
from desktop.ui.main_window import MainWindow
from tests.remote.fake_openai import Fake
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def test_remote_models_carry_the_leaves_this_device_badge(qtbot: Any, fake: Fake) -> None:
    ctx = build_context(policy=NoPolicy())
    ctx.remotes.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    box = win.chat.model_box
    qtbot.waitUntil(lambda: box.findData("gpu/echo") >= 0, timeout=20_000)
    assert box.itemText(box.findData("gpu/echo")) == \
        "echo (runs on gpu — leaves this device)"
    box.setCurrentIndex(box.findData("gpu/echo"))  # as the user picks it
    send(qtbot, win, "kept on this device")
    saved = [c for c in ctx.chat_store.list_conversations() if c.model == "gpu/echo"]
    assert len(saved) == 1
    assert [m.content for m in ctx.chat_store.get_messages(saved[0].id)] == ["kept on this device",
                                                   "kept on this device "]
    win.close()
