"""System prompt presets: saved by name, chosen in another chat, kept across restarts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt

PROMPT = "You translate everything into Simplified Chinese."


def test_a_saved_preset_is_offered_in_new_chats_and_after_restart(
    qtbot, edgedesk_home: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    header = win.chat.header
    assert header.preset_box.count() == 0
    header.system_prompt.setText(PROMPT)
    header.save_preset("  Translator ")
    stored = json.loads((edgedesk_home / "config" / "prompt_presets.json").read_text())
    assert stored["Translator"]["system_prompt"] == PROMPT
    assert stored["Translator"]["parameters"]["temperature"] == 0.7  # the chat's settings
    win.chat.new_chat()
    assert win.chat.current is not None and win.chat.current.system_prompt == ""
    assert header.choose_preset("Translator")
    assert win.chat.current.system_prompt == PROMPT
    assert win.chat.current.messages()[0].content == PROMPT
    win.close()

    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    assert again.chat.header.preset_box.itemText(0) == "Translator"
    again.close()


def test_a_preset_file_from_before_presets_kept_parameters_still_reads(
    qtbot, edgedesk_home: Path
) -> None:
    config = edgedesk_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "prompt_presets.json").write_text(json.dumps({"Old": PROMPT}))
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.chat.current.top_k = 3
    assert win.chat.header.choose_preset("Old")
    assert win.chat.current.system_prompt == PROMPT and win.chat.current.top_k == 3
    win.close()


def test_a_damaged_presets_file_is_reported_not_overwritten(qtbot, edgedesk_home: Path) -> None:
    path = edgedesk_home / "config" / "prompt_presets.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    assert "prompt_presets.json" in win.chat.notice.text()
    assert not win.chat.notice.isHidden()
    with qtbot.waitSignal(win.chat.header.error, timeout=1000):
        win.chat.header.save_preset("x")
    assert path.read_text() == "{not json"
    win.close()
