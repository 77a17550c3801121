"""A model imported in the window is remembered like ``edgedesk models import`` does it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from desktop.base.config import NoPolicy
from desktop.machine import doctor_report
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import send, wait_listed

pytestmark = pytest.mark.qt


def _open(qtbot) -> MainWindow:
    win = MainWindow(build_context(policy=NoPolicy()))  # a fresh start over EDGEDESK_HOME
    qtbot.addWidget(win)
    win.show()
    wait_listed(qtbot, win)
    return win


def test_an_import_from_the_window_is_listed_and_answers_after_a_restart(
    qtbot, edgedesk_home: Path, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _open(qtbot)
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(tiny_chat)], "GGUF models (*.gguf)")
    )
    first.show_page("models")
    qtbot.mouseClick(first.models.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: first.models.status.text().startswith("Imported "), timeout=20_000)
    model_id = first.models.status.text().removeprefix("Imported ")
    assert model_id in [ref for _, ref in first.models.chat_models()]
    # Before any restart, the hardware report (`edgedesk doctor`) knows it too.
    assert model_id in [row["id"] for row in doctor_report(first.context)["models"]]
    first.close()

    again = _open(qtbot)
    assert model_id in [ref for _, ref in again.models.chat_models()]
    again.use_model(model_id)
    turn = send(qtbot, again, "Hello")
    assert turn.error is None and turn.content
    again.close()


def test_an_imported_model_lists_its_quant_and_fit_after_a_restart(
    qtbot, edgedesk_home: Path, tiny_chat: Path
) -> None:
    first = _open(qtbot)
    model_id = first.models.import_file(tiny_chat)
    fresh = first.models.table_model.row_at(0)
    first.close()
    again = _open(qtbot)
    row = again.models.table_model.row_at(0)
    assert row.id == model_id and row.tier == "local"
    assert (row.recommended_quant, row.fit) == (fresh.recommended_quant, fresh.fit)
    assert row.fit != "—"
    again.close()


def test_a_vision_model_imported_with_its_projector_sees_after_a_restart(
    qtbot,
    edgedesk_home: Path,
    tiny_chat: Path,
    tiny_projector: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _open(qtbot)
    # Both files chosen together in the dialog, the projector first.
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(tiny_projector), str(tiny_chat)], "")
    )
    first.show_page("models")
    qtbot.mouseClick(first.models.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: first.models.status.text().startswith("Imported "), timeout=20_000)
    model_id = first.models.status.text().removeprefix("Imported ")
    first.close()
    again = _open(qtbot)
    again.use_model(model_id)
    assert again.chat.core.sees(model_id)  # a picture may be attached and sent
    again.close()


def test_two_models_chosen_together_are_refused_saying_what_to_choose(
    qtbot, edgedesk_home: Path, tiny_chat: Path, tiny_embed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    win = _open(qtbot)
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(tiny_chat), str(tiny_embed)], "")
    )
    win.show_page("models")
    qtbot.mouseClick(win.models.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "choose one model file" in win.models.status.text(), timeout=20_000)
    assert win.context.installed.all() == []  # nothing half-imported
    win.close()
