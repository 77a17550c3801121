"""Answer versions in the window: Regenerate keeps the old answer under ‹ 1/2 ›."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.chat.scripted import Scripted
from tests.ui.conftest import send

pytestmark = pytest.mark.qt

LEFT = Qt.MouseButton.LeftButton


def _regenerate(qtbot, win: MainWindow) -> None:
    chat = win.chat
    qtbot.waitUntil(chat._bubbles[-1].regenerate_button.isVisible, timeout=2000)
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(chat._bubbles[-1].regenerate_button, LEFT)


def test_flip_between_answer_versions_and_the_next_question_uses_the_chosen_one(
    qtbot, window: MainWindow
) -> None:
    engine = Scripted("The first answer.", "The second answer.", "Follow-up answer.")
    chat = window.chat
    chat.core.streamer = engine
    send(qtbot, window, "Question?")
    answer = chat._bubbles[-1]
    assert not answer.version_label.isVisible()  # one version: nothing to flip
    _regenerate(qtbot, window)

    answer = chat._bubbles[-1]
    assert answer.shown_markdown == "The second answer."
    assert answer.version_label.isVisible() and answer.version_label.text() == "2/2"
    assert answer.previous_version.isEnabled() and not answer.next_version.isEnabled()
    qtbot.mouseClick(answer.previous_version, LEFT)

    answer = chat._bubbles[-1]  # the bubble is made again for the version shown
    assert answer.shown_markdown == "The first answer."
    assert answer.version_label.text() == "1/2"
    assert answer.next_version.isEnabled() and not answer.previous_version.isEnabled()

    send(qtbot, window, "And?")
    assert [m.content for m in engine.prompts[-1]] == ["Question?", "The first answer.", "And?"]
    assert chat._bubbles[1].version_label.text() == "1/2"  # still there, earlier now


def test_the_chosen_version_is_shown_again_after_a_restart(
    qtbot, window: MainWindow, edgedesk_home: Path
) -> None:
    window.chat.core.streamer = Scripted("Old answer.", "New answer.")
    send(qtbot, window, "Question?")
    _regenerate(qtbot, window)
    qtbot.mouseClick(window.chat._bubbles[-1].previous_version, LEFT)
    window.close()

    again = MainWindow(build_context(policy=NoPolicy()))  # a fresh start, same data
    qtbot.addWidget(again)
    again.show()
    [saved] = [c for c in again.chat.chats.chats() if c.store_id is not None]
    again.chat.sidebar.show_chat(saved)
    assert again.chat.current is saved
    answer = again.chat._bubbles[-1]
    assert answer.shown_markdown == "Old answer."
    qtbot.waitUntil(answer.isVisible, timeout=2000)  # new bubbles are shown once laid out
    assert answer.version_label.isVisible() and answer.version_label.text() == "1/2"
    qtbot.mouseClick(answer.next_version, LEFT)
    assert again.chat._bubbles[-1].shown_markdown == "New answer."
    again.close()


def test_a_regenerate_that_fails_at_once_shows_the_old_answer_again(
    qtbot, window: MainWindow
) -> None:
    from tests.chat.test_answer_versions import FailsFirst

    window.chat.core.streamer = FailsFirst("Kept answer.", "never", fail=2)
    send(qtbot, window, "Question?")
    _regenerate(qtbot, window)
    answer = window.chat._bubbles[-1]
    assert answer.shown_markdown == "Kept answer."
    assert not answer.version_label.isVisible()
    assert "the model went away" in window.chat.notice.text()
