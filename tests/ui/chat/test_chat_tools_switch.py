"""The chat header's Tools switch (issue 50, item 6): it says that the MCP tools are on
for this chat and how many there are, turns them off for this chat only, and is kept
with the chat. A scripted engine records what it is offered; the calculator test server
is added on the Tools page, as a user adds one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from desktop.ui.tools.approval import ToolApproval
from tests.chat.scripted import Scripted
from tests.tools.conftest import SERVERS
from tests.ui.conftest import send

pytestmark = pytest.mark.qt
LEFT = Qt.MouseButton.LeftButton
CALL = '<tool_call>{"name": "add", "arguments": {"a": 20, "b": 22}}</tool_call>'


def _add_calc(qtbot, win: MainWindow, name: str = "calc") -> None:
    win.show_page("tools")
    qtbot.mouseClick(win.tools.add_button, LEFT)
    form = win.tools.form
    assert form is not None
    form.name.setText(name)
    form.command.setText(f'"{sys.executable}" "{SERVERS}" calc')
    qtbot.mouseClick(form.save_button, LEFT)
    win.show_page("chat")


def _offered(engine: Scripted, request: int) -> list[str]:
    tools = engine.tools[request] or []
    return [t["function"]["name"] for t in tools]


def test_the_header_says_tools_are_on_and_the_switch_turns_them_off_for_this_chat(
    qtbot, window: MainWindow, tiny_chat: Path
) -> None:
    chat = window.chat
    switch = chat.tools_switch
    assert not switch.isVisible()  # no tool server yet: nothing to switch
    _add_calc(qtbot, window)
    assert switch.isVisible() and switch.isChecked()
    assert switch.text() == "Tools: 1 server"
    assert "Off: no tools in this chat" in switch.toolTip()

    engine = Scripted(CALL, "It is 42.")
    chat.core.streamer = engine
    window.chat.approval_shown.connect(lambda dialog: dialog.allow_all.click())
    turn = send(qtbot, window, "20+22?")
    assert turn is not None and turn.content == "It is 42."
    assert sorted(_offered(engine, 0)) == ["add", "divide"]
    assert switch.text() == "Tools: 2 tools"  # the calculator's, now that it has run
    _add_calc(qtbot, window, "calc2")
    assert switch.text() == "Tools: 2 servers"  # counted again: the tools not known yet

    asked: list[ToolApproval] = []
    window.chat.approval_shown.connect(asked.append)
    qtbot.mouseClick(switch, LEFT)
    assert not switch.isChecked() and chat.current is not None and not chat.current.tools
    before = len(engine.tools)
    engine.answers = ["Without tools."]
    turn = send(qtbot, window, "and now?")
    assert turn.content == "Without tools."
    assert len(engine.tools) == before + 1 and engine.tools[-1] is None  # offered nothing
    assert asked == []
    store_id = chat.current.store_id
    assert store_id is not None

    # Another chat keeps its tools: the switch is per chat.
    qtbot.mouseClick(chat.new_button, LEFT)
    assert chat.current.store_id is None and chat.current.tools and switch.isChecked()
    engine.answers = ["Hello."]
    send(qtbot, window, "hi")
    assert "add" in _offered(engine, -1)
    window.close()
    if window.context.data_lock is not None:
        window.context.data_lock.release()

    # Reopened: the chat still has its tools off, the switch shows it.
    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    again.show()
    reopened = next(c for c in again.chat.chats.chats() if c.store_id == store_id)
    again.chat.select(reopened)
    assert not reopened.tools and not again.chat.tools_switch.isChecked()
    assert again.chat.tools_switch.isVisible()
    again.close()
