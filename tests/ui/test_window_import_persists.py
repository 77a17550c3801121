"""A model imported in the window is remembered like ``edgedesk models import`` does it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from desktop.app import build_context
from desktop.config import NoPolicy
from desktop.doctor import doctor_report
from desktop.ui.main_window import MainWindow
from tests.ui.conftest import send, wait_listed

pytestmark = pytest.mark.qt


def _open(qtbot) -> MainWindow:
    win = MainWindow(build_context(policy=NoPolicy()))  # a fresh start over EDGEDESK_HOME
    qtbot.addWidget(win)
    win.show()
    wait_listed(qtbot, win)
    return win


def test_an_import_from_the_window_is_listed_and_answers_after_a_restart(
        qtbot, edgedesk_home: Path, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _open(qtbot)
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *a, **k: (str(tiny_chat), "GGUF models (*.gguf)"))
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
        qtbot, edgedesk_home: Path, tiny_chat: Path) -> None:
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
