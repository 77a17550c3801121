"""Starting and stopping the local API from the Server screen, with a key made there."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_server_starts_serves_logs_and_stops_from_the_panel(qtbot, tiny_chat: Path) -> None:
    port = free_port()
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"server.port": port}))
    qtbot.addWidget(win)
    win.models.import_file(tiny_chat)
    panel = win.server
    key = panel.create_key("pytest")
    assert key and panel.key_list.count() == 1 and key not in panel.key_list.item(0).text()
    assert "Start the server" in panel.log.placeholderText()
    with qtbot.waitSignal(panel.state_changed, timeout=15_000) as started:
        qtbot.mouseClick(panel.toggle, _left())
    assert started.args == [True] and panel.toggle.text() == "Stop server"
    # The empty list no longer asks for a start that has happened (the walk found it).
    assert "Start the server" not in panel.log.placeholderText()
    assert "The server is running" in panel.log.placeholderText()
    url = panel.address.text()
    assert url == f"http://127.0.0.1:{port}/v1" and url in panel.snippet.toPlainText()
    assert httpx.get(f"{url}/models").status_code == 401  # keys are required
    reply = httpx.get(f"{url}/models", headers={"Authorization": f"Bearer {key}"})
    assert reply.status_code == 200
    assert "tiny-chat" in {m["id"] for m in reply.json()["data"]}
    # Both requests' lines (the 401, then the keyed 200) arrive through a queued signal.
    qtbot.waitUntil(lambda: "pytest" in panel.log.toPlainText(), timeout=30_000)
    assert key not in panel.log.toPlainText()

    with qtbot.waitSignal(panel.state_changed, timeout=15_000) as stopped:
        qtbot.mouseClick(panel.toggle, _left())
    assert stopped.args == [False] and panel.toggle.text() == "Start server"
    assert "Start the server" in panel.log.placeholderText()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)

    panel.key_list.setCurrentRow(0)
    panel._revoke_selected()
    assert panel.key_list.count() == 1  # the line saying there are no keys, not a key
    assert "No API keys" in panel.key_list.item(0).text() and panel._selected() is None
    win.close()


def test_the_panel_shows_each_clients_setup_with_the_real_address(qtbot) -> None:
    port = free_port()
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"server.port": port}))
    qtbot.addWidget(win)
    panel = win.server
    names = [panel.client_picker.itemText(i) for i in range(panel.client_picker.count())]
    assert {
        "Codex CLI",
        "Claude Code",
        "Continue",
        "Zed",
        "VS Code Copilot",
        "JetBrains AI Assistant",
    } <= set(names)
    panel.client_picker.setCurrentText("Codex CLI")
    codex = panel.snippet.toPlainText()
    assert f'base_url = "http://127.0.0.1:{port}/v1"' in codex and 'wire_api = "responses"' in codex
    panel.client_picker.setCurrentText("Claude Code")
    claude = panel.snippet.toPlainText()
    assert f"ANTHROPIC_BASE_URL=http://127.0.0.1:{port}\n" in claude
    assert "ANTHROPIC_AUTH_TOKEN=YOUR-EDGEDESK-KEY" in claude
    win.close()


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_saved_origins_apply_when_the_server_next_starts(qtbot) -> None:
    port = free_port()
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"server.port": port}))
    qtbot.addWidget(win)
    panel = win.server
    url = f"http://127.0.0.1:{port}/v1/models"
    ide = {"Origin": "https://ide.example", "Access-Control-Request-Method": "GET"}
    for expected in (None, "https://ide.example"):
        with qtbot.waitSignal(panel.state_changed, timeout=15_000):
            qtbot.mouseClick(panel.toggle, _left())
        preflight = httpx.options(url, headers=ide)
        assert preflight.headers.get("access-control-allow-origin") == expected
        with qtbot.waitSignal(panel.state_changed, timeout=15_000):
            qtbot.mouseClick(panel.toggle, _left())
        panel.origins.setText("https://ide.example")
        panel._save_origins()  # saved while stopped: the next start must obey it
    assert "next time the server starts" in panel.notice.text()
    win.close()


def test_a_keys_last_use_shows_while_the_window_is_open(qtbot) -> None:
    port = free_port()
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"server.port": port}))
    qtbot.addWidget(win)
    panel = win.server
    key = panel.create_key("laptop")
    assert key and "never used" in panel.key_list.item(0).text()
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, _left())
    url = panel.address.text()
    assert httpx.get(f"{url}/models", headers={"Authorization": f"Bearer {key}"}).is_success
    qtbot.waitUntil(lambda: "never" not in panel.key_list.item(0).text(), timeout=30_000)
    assert "last used just now" in panel.key_list.item(0).text()  # the exact time on hover
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, _left())
    win.close()
