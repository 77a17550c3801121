"""The Hub unreachable, and errors that outlive what they were about (issue 24, items 4–5)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import wait_listed
from tests.ui.server.test_server_view import free_port

pytestmark = pytest.mark.qt


def _window(qtbot, edgedesk_home: Path, endpoint: str) -> MainWindow:
    config = edgedesk_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(f'hub_endpoint = "{endpoint}"\n')
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    wait_listed(qtbot, win)
    win.show_page("models")
    return win


def _search(qtbot, win: MainWindow, text: str) -> None:
    hub = win.models.hub_search
    hub.query.setText(text)
    qtbot.mouseClick(hub.search_button, Qt.MouseButton.LeftButton)


def test_no_network_fails_the_search_at_once_in_plain_words(
    qtbot, edgedesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_dns(*_args: object, **_kwargs: object) -> object:  # what a machine without
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")  # network says

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    win = _window(qtbot, edgedesk_home, "https://hub.example.org")
    hub = win.models.hub_search
    with qtbot.waitSignal(hub.error, timeout=20_000) as error:
        _search(qtbot, win, "glm")
    message = error.args[0]
    assert "Errno" not in message and "Name or service" not in message
    assert "no network connection" in message
    qtbot.waitUntil(hub.search_button.isEnabled, timeout=30_000)  # the search is over
    assert not hub.cancel_button.isVisible()
    asked = [e for e in win.context.net.entries() if e.host == "hub.example.org"]
    assert len(asked) == 1  # not asked again and again while "Searching…" stays up
    win.close()


def test_a_search_that_hangs_can_be_cancelled(qtbot, edgedesk_home: Path) -> None:
    port = free_port()
    silent = socket.socket()
    silent.bind(("127.0.0.1", port))
    silent.listen()  # takes the connection, never answers
    try:
        win = _window(qtbot, edgedesk_home, f"http://127.0.0.1:{port}")
        hub = win.models.hub_search
        _search(qtbot, win, "glm")
        assert hub.status.text() == "Searching…" and not hub.search_button.isEnabled()
        assert hub.cancel_button.isVisible()
        qtbot.mouseClick(hub.cancel_button, Qt.MouseButton.LeftButton)
        assert hub.search_button.isEnabled() and not hub.cancel_button.isVisible()
        assert hub.status.text() == "Search cancelled."
    finally:
        silent.close()  # the abandoned request now fails: its error is not shown
    qtbot.waitUntil(lambda: win.pool.active == 0, timeout=60_000)
    assert hub.status.text() == "Search cancelled."
    win.close()


def _first_run_refused(qtbot) -> tuple[MainWindow, object]:
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    win.show()
    wait_listed(qtbot, win)
    dialog = win.maybe_first_run()
    assert dialog is not None
    # Offline: refused. Called, not clicked: the welcome's button may well be off offline.
    dialog.start()
    qtbot.waitUntil(lambda: "offline" in win.models.status.text().lower(), timeout=5000)
    return win, dialog


def test_a_first_run_error_goes_with_the_first_run_dialog(qtbot, edgedesk_home: Path) -> None:
    win, dialog = _first_run_refused(qtbot)
    qtbot.mouseClick(dialog.skip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    # The download error was about the setup, which is over: the Models bar forgets it.
    assert win.models.status.text() == ""
    win.close()


def test_first_run_offers_a_file_i_have(
    qtbot, edgedesk_home: Path, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    win, dialog = _first_run_refused(qtbot)
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(tiny_chat)], "GGUF models (*.gguf)")
    )
    with qtbot.waitSignal(dialog.ready, timeout=20_000) as ready:
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    model_id = ready.args[0]
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    assert win.chat.current is not None and win.chat.current.model == model_id
    win.close()


def test_an_import_clears_an_earlier_search_error(
    qtbot, edgedesk_home: Path, tiny_chat: Path
) -> None:
    win = _window(qtbot, edgedesk_home, f"http://127.0.0.1:{free_port()}")  # nobody there
    hub = win.models.hub_search
    with qtbot.waitSignal(hub.error, timeout=20_000):
        _search(qtbot, win, "glm")
    assert hub.status.text()
    win.models.import_later(tiny_chat)
    qtbot.waitUntil(lambda: win.models.status.text().startswith("Imported"), timeout=20_000)
    assert hub.status.text() == ""
    win.close()
