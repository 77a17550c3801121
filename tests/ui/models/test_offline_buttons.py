"""Offline, the download and search buttons are disabled before anyone presses them and
say why, with the remedy for what set it: Settings, EDGEDESK_OFFLINE, --offline or IT's
policy (the window walk found them live, refusing only after a click and always sending
the user to Settings). Importing a file on this computer still works offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import CAT_ID, wait_listed

pytestmark = pytest.mark.qt


class ForceOffline:
    def forced(self) -> dict[str, object]:
        return {"offline": True}


class NoDownloads:
    def forced(self) -> dict[str, object]:
        return {"allow_downloads": False}


def _open(qtbot, **options: object) -> MainWindow:
    win = MainWindow(build_context(**{"policy": NoPolicy(), **options}))
    qtbot.addWidget(win)
    win.show()
    win.show_page("models")
    wait_listed(qtbot, win)
    return win


def _select(win: MainWindow, ref: str) -> None:
    model = win.models.table_model
    win.models.table.selectRow(
        next(n for n in range(model.rowCount()) if model.row_at(n).id == ref)
    )


def _offline_by(cause: str, edgedesk_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Set offline mode the way ``cause`` does; the build_context options that go with it."""
    if cause == "settings":  # "Offline" ticked in Settings, saved in settings.toml
        config = edgedesk_home / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.toml").write_text("offline = true\n", encoding="utf-8")
        return {}
    if cause == "environment":
        monkeypatch.setenv("EDGEDESK_OFFLINE", "1")
        return {}
    if cause == "command line":
        return {"cli_settings": {"offline": True}}
    return {"policy": ForceOffline()}


# What each cause's words must name (its remedy), and what they must not send anyone to.
REMEDIES = {
    "settings": (("Settings", "Untick"), ("EDGEDESK_OFFLINE", "--offline", "policy")),
    "environment": (("EDGEDESK_OFFLINE", "without it"), ("Untick", "--offline", "policy")),
    "command line": (("--offline", "without"), ("Untick", "EDGEDESK_OFFLINE", "policy")),
    "policy": (("organization's policy", "ForceOffline"), ("Untick", "EDGEDESK_OFFLINE")),
}


@pytest.mark.parametrize("cause", list(REMEDIES))
def test_offline_the_download_buttons_are_off_and_say_the_remedy_for_their_cause(
    qtbot, cause: str, edgedesk_home: Path, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    win = _open(qtbot, **_offline_by(cause, edgedesk_home, monkeypatch))
    view, search = win.models, win.models.hub_search
    _select(win, CAT_ID)  # a catalog model not downloaded: Download is what it would want
    why = view.download_button.toolTip()
    named, never = REMEDIES[cause]
    assert all(word in why for word in named), why
    assert not any(word in why for word in never), why
    assert "importing a .gguf file still works" in why.lower()
    assert not view.download_button.isEnabled()
    assert not search.search_button.isEnabled() and search.search_button.toolTip() == why
    assert not search.get_button.isEnabled() and search.get_button.toolTip() == why
    assert search.status.text() == why  # said on the screen, not only on hover
    # Pressed anyway (Enter in the search box, the welcome's download): the same words.
    search.query.setText("glm")
    assert search.search() is None and search.status.text() == why
    assert view.download(CAT_ID) is None and view.status.text() == why
    # A file on this computer needs no network.
    assert view.import_button.isEnabled()
    model_id = view.import_file(tiny_chat)
    _select(win, model_id)
    assert view.use_button.isEnabled() and view.load_button.isEnabled()
    win.close()


def test_offline_ticked_in_settings_turns_the_buttons_off_when_the_window_is_back(
    qtbot, edgedesk_home: Path
) -> None:
    win = _open(qtbot)
    view = win.models
    _select(win, CAT_ID)
    assert view.download_button.isEnabled() and view.hub_search.search_button.isEnabled()
    dialog = win.open_settings()  # over the Models screen, which stays in view
    dialog.offline.setChecked(True)
    dialog.accept()
    # The window is active again once the dialog is gone: that is when the screen looks.
    QCoreApplication.sendEvent(win, QEvent(QEvent.Type.WindowActivate))
    assert not view.download_button.isEnabled()
    assert not view.hub_search.search_button.isEnabled()
    assert "Untick" in view.download_button.toolTip()
    assert "Untick" in view.hub_search.status.text()
    dialog = win.open_settings()
    dialog.offline.setChecked(False)
    dialog.accept()
    QCoreApplication.sendEvent(win, QEvent(QEvent.Type.WindowActivate))
    assert view.download_button.isEnabled() and view.hub_search.search_button.isEnabled()
    assert view.hub_search.status.text() == ""  # the reason is over
    win.close()


def test_with_downloads_off_by_policy_search_works_and_download_says_why(
    qtbot, edgedesk_home: Path
) -> None:
    win = _open(qtbot, policy=NoDownloads())
    view, search = win.models, win.models.hub_search
    _select(win, CAT_ID)
    assert not view.download_button.isEnabled() and not search.get_button.isEnabled()
    assert "AllowDownloads" in view.download_button.toolTip()
    assert search.search_button.isEnabled()  # searching downloads nothing
    assert search.status.text() == ""
    win.close()
