"""Tool calls in the window: the approval dialog with the arguments, the collapsed calls
under the answer, and Deny. A scripted engine calls the test calculator server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from shiboken6 import isValid

from desktop.tools._call_log import ToolAudit
from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import ServerList
from desktop.tools._toolbox import ToolBox
from desktop.ui.shell.main_window import MainWindow
from desktop.ui.tools.approval import ToolApproval
from tests.chat.scripted import Scripted
from tests.tools.conftest import SERVERS
from tests.ui.conftest import send

CALL = '<tool_call>{"name": "add", "arguments": {"a": 20, "b": 22}}</tool_call>'


@pytest.fixture
def toolbox(tmp_path: Path) -> Iterator[ToolBox]:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {"mcpServers": {"calc": {"command": sys.executable, "args": [str(SERVERS), "calc"]}}}
        )
    )
    clients = McpClients(log_dir=tmp_path, token=lambda _n: None)
    yield ToolBox(ServerList(path), clients, ToolAudit(tmp_path / "tools.jsonl"))
    clients.close()


def _answering(window: MainWindow, button: str, shown: list[str]) -> list[ToolApproval]:
    """Answer each approval dialog as it opens, as a user's click on ``button`` would."""
    dialogs: list[ToolApproval] = []

    def on_shown(dialog: ToolApproval) -> None:
        dialogs.append(dialog)
        row = dialog.calls.topLevelItem(0)
        # What the user sees without clicking anything: the call, and its arguments.
        shown.append(
            "\n".join(
                [
                    dialog.summary.text(),
                    dialog.limit.text(),
                    row.text(1),
                    row.text(3),
                    dialog.arguments.toPlainText(),
                ]
            )
        )
        assert dialog.isVisible() and not dialog.isModal()
        assert QApplication.activeModalWidget() is None  # the window's Stop stays usable
        if button:
            getattr(dialog, button).click()

    window.chat.approval_shown.connect(on_shown)
    return dialogs


def test_an_allowed_call_runs_and_shows_collapsed_under_the_answer(
    qtbot, window: MainWindow, toolbox: ToolBox
) -> None:
    window.chat.core.streamer = Scripted(CALL, "It is 42.")
    window.chat.core.tools = toolbox
    shown: list[str] = []
    _answering(window, "allow_all", shown)
    turn = send(qtbot, window, "20+22?")
    assert turn is not None and turn.content == "It is 42."
    assert "add on the tool server calc" in shown[0] and '"a": 20' in shown[0]
    assert '{"a": 20, "b": 22}' in shown[0]  # in the list itself, not behind "Details"
    [step] = turn.tool_steps
    assert step.results[0].text == "42"
    bubble = window.chat._bubbles[-1]
    assert bubble.tools_toggle.isVisible() and not bubble.tools.isVisible()
    assert bubble.tools_toggle.text() == "▸ Tools (1 calls)"
    qtbot.mouseClick(bubble.tools_toggle, Qt.MouseButton.LeftButton)
    assert bubble.tools.isVisible() and "add" in bubble.tools.text() and "42" in bubble.tools.text()


def test_a_denied_call_is_told_to_the_model(qtbot, window: MainWindow, toolbox: ToolBox) -> None:
    engine = Scripted(CALL, "I may not.")
    window.chat.core.streamer = engine
    window.chat.core.tools = toolbox
    _answering(window, "deny_all", [])
    turn = send(qtbot, window, "20+22?")
    assert turn.tool_steps[0].results[0].status == "denied"
    assert engine.prompts[1][-1].content == "The user did not allow this call."


def test_a_storm_of_identical_calls_asks_once_and_runs_once(
    qtbot, window: MainWindow, toolbox: ToolBox
) -> None:
    window.chat.core.streamer = Scripted(" ".join([CALL] * 29), "It is 42.")
    window.chat.core.tools = toolbox
    shown: list[str] = []
    dialogs = _answering(window, "allow_all", shown)
    turn = send(qtbot, window, "20+22?")
    assert len(dialogs) == 1  # one question for the whole round, not 29
    assert "add ×29" in shown[0] and "Round 1 of at most 8" in shown[0]
    [step] = turn.tool_steps
    assert [r.text for r in step.results] == ["42"] * 29
    assert len({r.call_id for r in step.results}) == 29  # each call gets its answer
    assert len(toolbox.audit.entries()) == 1  # the server ran it once


def test_choosing_per_call_runs_only_the_ticked_ones(
    qtbot, window: MainWindow, toolbox: ToolBox
) -> None:
    divide = '<tool_call>{"name": "divide", "arguments": {"a": 8, "b": 2}}</tool_call>'
    window.chat.core.streamer = Scripted(CALL + " " + divide, "Done.")
    window.chat.core.tools = toolbox

    def untick_divide(dialog: ToolApproval) -> None:
        assert dialog.calls.topLevelItemCount() == 2 and dialog.allow_checked.isVisible()
        dialog.calls.topLevelItem(1).setCheckState(0, Qt.CheckState.Unchecked)
        dialog.allow_checked.click()

    window.chat.approval_shown.connect(untick_divide)
    turn = send(qtbot, window, "both")
    [step] = turn.tool_steps
    assert [(r.name, r.status) for r in step.results] == [("add", "ok"), ("divide", "denied")]


def test_stop_is_reachable_while_the_dialog_asks(
    qtbot, window: MainWindow, toolbox: ToolBox
) -> None:
    window.chat.core.streamer = Scripted(CALL, "never reached")
    window.chat.core.tools = toolbox
    dialogs = _answering(window, "", [])

    def stop_from_the_window(_dialog: ToolApproval) -> None:
        stop = window.chat.composer.stop_button
        assert stop.isEnabled()
        qtbot.mouseClick(stop, Qt.MouseButton.LeftButton)

    window.chat.approval_shown.connect(stop_from_the_window)
    turn = send(qtbot, window, "20+22?")
    assert turn is not None and turn.finish_reason == "cancelled"
    assert turn.tool_steps[0].results[0].status == "denied"  # never ran
    assert toolbox.audit.entries() == []
    qtbot.waitUntil(
        lambda: (
            window.chat.approval is None and (not isValid(dialogs[0]) or not dialogs[0].isVisible())
        )
    )


def test_the_tools_page_lists_servers_and_their_tools(qtbot, window: MainWindow) -> None:
    config = window.context.tool_servers.path
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "calc": {"command": sys.executable, "args": [str(SERVERS), "calc"]},
                    "wiki": {"url": "http://127.0.0.1:9/mcp"},
                }
            }
        )
    )  # loopback; nothing listens
    window.show_page("tools")
    page = window.tools
    page.reload()
    tree = page.tree
    rows = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }
    assert rows["calc"].text(1) == "allowed"
    assert rows["wiki"].text(2) == "http://127.0.0.1:9/mcp"
    builtin = rows["Built-in (documents)"]
    assert {builtin.child(i).text(0) for i in range(builtin.childCount())} == {
        "search_documents",
        "read_document_passage",
    }
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=60_000)
    calc = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "calc"
    )
    assert {calc.child(i).text(0) for i in range(calc.childCount())} == {"add", "divide"}
    wiki = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "wiki"
    )
    assert wiki.text(1).startswith("failed: ")  # not reachable: a clear reason
