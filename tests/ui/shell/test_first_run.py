"""First-run setup with a fake Hub: recommend, download with progress, land in a chat; once."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.catalog._fit import Verdict
from desktop.catalog._listing import CatalogRow
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.first_run import FirstRunDialog, recommend
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub, Fault
from tests.ui.conftest import CAT_FILE, CAT_ID, CAT_REPO, wait_listed

pytestmark = pytest.mark.qt


def _window(qtbot) -> MainWindow:
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    wait_listed(qtbot, win)  # as the app does before it offers first-run setup
    return win


def test_first_run_downloads_the_recommended_model_and_lands_in_a_chat(
    qtbot, hub: FakeHub, tiny_chat: Path
) -> None:
    hub.add_fault(
        CAT_REPO, CAT_FILE, Fault("throttle", bytes_per_s=len(tiny_chat.read_bytes()) // 2, times=1)
    )
    win = _window(qtbot)
    dialog = win.maybe_first_run()
    assert isinstance(dialog, FirstRunDialog) and dialog.isVisible()
    assert dialog.recommended is not None and dialog.recommended.id == CAT_ID
    assert "GLM-Edge 1.5B Chat" in dialog.choice.text()
    seen: list[int] = []
    dialog.progress.valueChanged.connect(seen.append)
    with qtbot.waitSignal(dialog.ready, timeout=20_000) as ready:
        qtbot.mouseClick(dialog.start_button, _left())
    assert ready.args == [CAT_ID]
    assert any(0 < v < 1000 for v in seen)  # the bar moved before the end
    assert not dialog.isVisible()
    assert win.chat.current is not None and win.chat.current.model == CAT_ID
    assert win.chat.model_box.currentData() == CAT_ID
    win.close()
    again = _window(qtbot)
    assert again.maybe_first_run() is None  # installed and settled: never again
    again.close()


def test_skipping_is_remembered(qtbot, hub: FakeHub) -> None:
    win = _window(qtbot)
    dialog = win.maybe_first_run()
    assert dialog is not None
    qtbot.mouseClick(dialog.skip_button, _left())
    assert not dialog.isVisible() and hub.downloads() == []
    win.close()
    again = _window(qtbot)
    assert again.maybe_first_run() is None
    again.close()


def test_not_offered_when_a_model_is_there(qtbot, hub: FakeHub, tiny_chat: Path) -> None:
    win = _window(qtbot)
    win.models.import_file(tiny_chat)
    assert win.maybe_first_run() is None
    win.close()


def _row(model_id: str, family: str, size: int, fit: Verdict) -> CatalogRow:
    return CatalogRow(model_id, model_id, family, "chat", "t", "r", "Q4_K_M", size, str(fit), None)


def test_recommendation_prefers_a_glm_that_fits() -> None:
    gb = 1024**3
    cpu = [
        _row("kimi", "kimi", 1 * gb, Verdict.CPU),
        _row("glm-9b", "glm", 6 * gb, Verdict.CPU),
        _row("glm-1.5b", "glm", 1 * gb, Verdict.CPU),
        _row("huge", "glm", 70 * gb, Verdict.NO),
    ]
    assert recommend(cpu).id == "glm-1.5b"  # on a CPU: small answers at reading speed
    gpu = [
        _row("glm-1.5b", "glm", 1 * gb, Verdict.GPU),
        _row("glm-9b", "glm", 6 * gb, Verdict.GPU),
        _row("glm-32b", "glm", 19 * gb, Verdict.GPU),
    ]
    assert recommend(gpu).id == "glm-9b"
    assert recommend([_row("huge", "glm", 70 * gb, Verdict.NO)]) is None


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_the_welcome_waits_for_its_window_to_be_on_screen(
    qtbot, hub: FakeHub, context: AppContext
) -> None:
    # Offered before the window manager showed the window (a fast listing on a warm
    # cache), the welcome opened first and could end up under the window, never seen.
    win = MainWindow(context)
    qtbot.addWidget(win)
    wait_listed(qtbot, win)
    dialog = win.maybe_first_run()
    assert isinstance(dialog, FirstRunDialog)
    assert not dialog.isVisible()  # no welcome without its window
    win.show()
    qtbot.waitUntil(dialog.isVisible, timeout=10_000)
    assert win.isVisible() and win.windowHandle().isExposed()
    dialog.skip()
    win.close()


def test_a_later_import_does_not_become_the_chats_model(
    qtbot, hub: FakeHub, tiny_chat: Path, tiny_embed: Path
) -> None:
    # The window keeps the closed welcome: it still heard the Models screen's imports,
    # so importing an embedding model later made it the chat's model (the picker said
    # "Choose a model…" and sending failed) and jumped to the Chats screen.
    win = _window(qtbot)
    dialog = win.maybe_first_run()
    assert isinstance(dialog, FirstRunDialog)
    with qtbot.waitSignal(dialog.ready, timeout=20_000) as ready:
        win.models.import_later(tiny_chat)  # as the welcome's "Import a file I have…"
    chat_model = ready.args[0]
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    assert win.chat.current is not None and win.chat.current.model == chat_model
    win.show_page("models")
    with qtbot.waitSignal(win.models.imported, timeout=20_000) as embedding:
        win.models.import_later(tiny_embed)
    assert embedding.args[0] != chat_model
    wait_listed(qtbot, win)  # when the welcome, still listening, would have acted
    assert win.chat.current.model == chat_model
    assert win.chat.model_box.currentData() == chat_model
    assert win.stack.currentWidget() is win.models
    win.close()


def test_importing_an_embedding_model_in_the_welcome_says_it_cannot_chat(
    qtbot, hub: FakeHub, tiny_embed: Path
) -> None:
    # "Import a file I have…" with an embedding GGUF closed the welcome as if set up:
    # the chat's picker said "Choose a model…" and the first message was refused.
    win = _window(qtbot)
    dialog = win.maybe_first_run()
    assert isinstance(dialog, FirstRunDialog)
    readied: list[str] = []
    dialog.ready.connect(readied.append)
    with qtbot.waitSignal(win.models.imported, timeout=20_000) as embedding:
        win.models.import_later(tiny_embed)
    wait_listed(qtbot, win)
    assert readied == [] and dialog.isVisible()
    assert "cannot chat" in dialog.status.text()
    assert embedding.args[0] in dialog.status.text()
    assert win.chat.current is None or win.chat.current.model != embedding.args[0]
    dialog.skip()
    win.close()


def test_offline_the_welcome_offers_import_not_a_download_it_cannot_make(
    qtbot, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # IT's deployment sets EDGEDESK_OFFLINE: "Download and start" would only refuse after
    # a click, so it is off, says why in the welcome, and Import stays.
    monkeypatch.setenv("EDGEDESK_OFFLINE", "1")
    win = _window(qtbot)
    dialog = win.maybe_first_run()
    assert isinstance(dialog, FirstRunDialog) and dialog.recommended is not None
    assert not dialog.start_button.isEnabled()
    why = dialog.start_button.toolTip()
    assert "EDGEDESK_OFFLINE" in why and "Untick" not in why
    assert dialog.status.text() == why
    assert dialog.import_button.isEnabled()
    # The status bar's Offline mark names the same cause, not Settings.
    assert "EDGEDESK_OFFLINE" in win.offline_status.toolTip()
    assert hub.downloads() == []
    dialog.reject()
    win.close()
