"""A chat's model, chosen in the header after its first turn, is the one it reopens with."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.tiny_gguf import write_tiny_llama
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def test_a_model_chosen_after_the_first_turn_is_remembered_after_a_restart(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context

    first = write_tiny_llama(tmp_path / "first.gguf")
    second = write_tiny_llama(tmp_path / "second.gguf", seed=5)
    first_ref = window.models.import_file(first)
    second_ref = window.models.import_file(second)
    window.use_model(first_ref)
    send(qtbot, window, "hello", max_tokens=2)
    box = window.chat.header.model_box
    box.setCurrentIndex(box.findData(second_ref))  # as a click in the list does
    assert window.chat.current is not None and window.chat.current.model == second_ref
    window.close()

    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    again.show()
    again.models.import_file(first)  # as the think test: the models are offered again
    again.models.import_file(second)
    saved = next(c for c in again.chat.chats.chats() if c.title == "hello")
    again.chat.select(saved)
    assert saved.model == second_ref
    shown = again.chat.header.model_box
    assert shown.itemData(shown.currentIndex()) == second_ref
    again.close()
