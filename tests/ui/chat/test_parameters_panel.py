"""The parameters panel: typed values reach the engine, stay with the chat and presets."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.chat.scripted import Scripted
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def _type(box: QAbstractSpinBox, text: str) -> None:
    """Select what the box shows and type ``text`` over it, as a user does."""
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, text)
    box.interpretText()
    QTest.keyClick(box, Qt.Key.Key_Tab)


def _open_panel(qtbot, win: MainWindow):
    header = win.chat.header
    assert not header.parameters.isVisible()
    qtbot.mouseClick(header.parameters_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(header.parameters.isVisible, timeout=2000)
    return header.parameters


def test_typed_parameters_are_what_the_engine_gets_and_survive_a_restart(
    qtbot, window: MainWindow, edgedesk_home: Path
) -> None:
    engine = Scripted("Fine.")
    window.chat.core.streamer = engine
    panel = _open_panel(qtbot, window)
    _type(panel.top_p, "0.5")
    _type(panel.top_k, "7")
    _type(panel.min_p, "0.1")
    _type(panel.repeat_penalty, "1.3")
    _type(panel.seed, "1234")
    _type(panel.max_tokens, "77")
    _type(panel.context, "1536")  # within the tiny model's trained 2048
    window.chat.input.setPlainText("Hello")
    with qtbot.waitSignal(window.chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(window.chat.send_button, Qt.MouseButton.LeftButton)
    params = engine.params[-1]
    assert (
        params.max_tokens,
        params.top_p,
        params.top_k,
        params.min_p,
        params.repeat_penalty,
        params.seed,
        params.context_length,
    ) == (77, 0.5, 7, 0.1, 1.3, 1234, 1536)
    _type(panel.top_k, "9")  # changed after the answer: kept too
    window.close()

    again = MainWindow(build_context(policy=NoPolicy()))  # a fresh start, same data
    qtbot.addWidget(again)
    again.show()
    [saved] = [c for c in again.chat.chats.chats() if c.store_id is not None]
    again.chat.sidebar.show_chat(saved)
    shown = again.chat.header.parameters
    assert (
        shown.max_tokens.value(),
        shown.top_k.value(),
        shown.seed.text(),
        shown.context.value(),
    ) == (77, 9, "1234", 1536)
    again.close()


def test_values_the_engine_would_refuse_cannot_be_entered(qtbot, window: MainWindow) -> None:
    panel = _open_panel(qtbot, window)
    _type(panel.top_p, "5")
    _type(panel.max_tokens, "-3")
    _type(panel.repeat_penalty, "9")
    chat = window.chat.current
    assert 0 <= chat.top_p <= 1 and chat.max_tokens >= 1 and chat.repeat_penalty <= 2
    assert panel.seed.text() == "Random" and chat.seed is None
    assert panel.context.text() == "Auto" and chat.context_length is None
    _type(panel.context, "100")  # fewer tokens than any chat can use: Auto
    assert chat.context_length is None
    panel.context.stepBy(1)  # the arrows step 512, 1024, 2048, … (issue 37, item 6)
    assert chat.context_length == 512
    panel.context.stepBy(1)
    assert chat.context_length == 1024
    assert panel.top_k.minimum() == 0 and panel.top_k.specialValueText() == "Off"
    _type(panel.seed, "42")
    qtbot.mouseClick(panel.reset_button, Qt.MouseButton.LeftButton)
    assert chat.seed is None and chat.top_k == 40 and panel.seed.text() == "Random"


def test_a_preset_keeps_the_parameters_and_brings_them_to_another_chat(
    qtbot, window: MainWindow
) -> None:
    engine = Scripted("Fine.")
    window.chat.core.streamer = engine
    panel = _open_panel(qtbot, window)
    header = window.chat.header
    header.system_prompt.setText("Be exact.")
    header.temperature.setValue(0.1)
    _type(panel.top_k, "3")
    _type(panel.seed, "5")
    header.save_preset("Exact")
    window.chat.new_chat()
    _type(panel.top_k, "50")
    _type(panel.seed, "0")
    assert header.choose_preset("Exact")
    assert (panel.top_k.value(), panel.seed.value(), header.temperature.value()) == (3, 5, 0.1)
    send(qtbot, window, "Hello")
    params = engine.params[-1]
    assert (params.top_k, params.seed, params.temperature) == (3, 5, 0.1)
