"""Adding MCP servers in the window (issue 37, item 2): by form (a command with its
environment, or a URL with a token kept in the keyring) and by pasting an mcp.json; a
server that fails shows the last lines of its log, and a retry after the fix works at
once (not after a minute of the stale failure)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.tools._servers import token_get
from desktop.ui.shell.main_window import MainWindow
from tests.tools.conftest import SERVERS

pytestmark = pytest.mark.qt
LEFT = Qt.MouseButton.LeftButton


def _rows(window: MainWindow) -> dict[str, object]:
    tree = window.tools.tree
    return {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }


def _test_servers(qtbot, window: MainWindow) -> None:
    page = window.tools
    qtbot.mouseClick(page.test_button, LEFT)
    qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=60_000)


def test_a_command_server_added_by_form_lists_its_tools(qtbot, window: MainWindow) -> None:
    window.show_page("tools")
    page = window.tools
    qtbot.mouseClick(page.add_button, LEFT)
    form = page.form
    assert form is not None and form.isVisible()
    form.name.setText("calc")
    form.command.setText(f'"{sys.executable}" "{SERVERS}" calc')
    form.env.setPlainText("CALC_MODE=exact\n")
    assert not form.url.isVisible() and not form.token.isVisible()  # a command's fields
    qtbot.mouseClick(form.save_button, LEFT)
    entry = json.loads(window.context.tool_servers.path.read_text())["mcpServers"]["calc"]
    assert entry == {
        "command": sys.executable,
        "args": [str(SERVERS), "calc"],
        "env": {"CALC_MODE": "exact"},
    }
    assert "Added calc" in page.note.text()
    _test_servers(qtbot, window)
    calc = _rows(window)["calc"]
    assert {calc.child(i).text(0) for i in range(calc.childCount())} == {"add", "divide"}


def test_a_url_servers_token_goes_to_the_keyring_not_the_file(
    qtbot, window: MainWindow, file_keyring: Path
) -> None:
    page = window.tools
    form = page.open_form()
    form.name.setText("wiki")
    form.kind.setCurrentIndex(1)
    assert form.url.isVisible() and form.token.isVisible() and not form.command.isVisible()
    form.url.setText("http://127.0.0.1:9/mcp")
    form.token.setText("s3cret-token")
    assert form.save()
    text = window.context.tool_servers.path.read_text()
    assert "s3cret-token" not in text and json.loads(text)["mcpServers"]["wiki"] == {
        "url": "http://127.0.0.1:9/mcp"
    }
    assert token_get("wiki") == "s3cret-token"


def test_a_pasted_mcp_json_adds_its_servers_and_bad_text_is_explained(
    qtbot, window: MainWindow
) -> None:
    page = window.tools
    qtbot.mouseClick(page.paste_button, LEFT)
    paste = page.paste
    assert paste is not None and paste.isVisible()
    paste.text.setPlainText("{not json")
    assert not paste.save()
    assert "not JSON" in paste.error.text() and paste.isVisible()
    paste.text.setPlainText(
        json.dumps(
            {
                "mcpServers": {
                    "calc": {"command": sys.executable, "args": [str(SERVERS), "calc"]},
                    "wiki": {"url": "http://127.0.0.1:9/mcp"},
                }
            }
        )
    )
    qtbot.mouseClick(paste.add_button, LEFT)
    assert {"calc", "wiki"} <= set(_rows(window))
    assert "Added calc, wiki" in page.note.text()


def test_a_failing_server_shows_its_log_and_a_retry_after_the_fix_works_at_once(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    script = tmp_path / "server.py"
    script.write_text(
        "import sys\nsys.stderr.write('ModuleNotFoundError: No module named weather_api\\n')\n"
        "sys.exit(1)\n"
    )
    form = window.tools.open_form()
    form.name.setText("weather")
    form.command.setText(f'"{sys.executable}" "{script}"')
    assert form.save()
    _test_servers(qtbot, window)
    weather = _rows(window)["weather"]
    assert weather.text(1).startswith("failed: ")
    log = weather.child(0)
    assert log.text(0) == "Its log" and log.text(2).endswith("mcp-weather.log")
    lines = [log.child(i).text(2) for i in range(log.childCount())]
    assert "ModuleNotFoundError: No module named weather_api" in lines
    # The user fixes the server, then asks again: it starts now, not a minute later.
    script.write_text(
        textwrap.dedent(
            f"""
            import runpy, sys
            sys.argv = [{str(SERVERS)!r}, "calc"]
            runpy.run_path({str(SERVERS)!r}, run_name="__main__")
            """
        )
    )
    _test_servers(qtbot, window)
    weather = _rows(window)["weather"]
    assert weather.text(1) == "allowed"
    assert {weather.child(i).text(0) for i in range(weather.childCount())} == {"add", "divide"}
