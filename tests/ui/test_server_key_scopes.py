"""The Server screen shows each API key's scope and last use."""

from __future__ import annotations

import pytest

from desktop.app import AppContext
from desktop.ui.main_window import MainWindow

pytestmark = pytest.mark.qt


def test_key_list_shows_scopes_and_last_use(qtbot, context: AppContext) -> None:  # type: ignore[no-untyped-def]
    ctx = context
    ctx.key_store.create("vscode", models=["qwen"], endpoints=["chat"], rate_per_min=30)
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    panel = win.server
    panel.create_key("plain")
    texts = sorted(panel.key_list.item(i).text() for i in range(panel.key_list.count()))
    assert "any model, any endpoint" in texts[0] and "last used never" in texts[0]
    assert "endpoints chat; models qwen; 30/min" in texts[1]
    win.close()
