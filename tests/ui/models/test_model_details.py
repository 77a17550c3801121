"""Models → Details…: header, catalog, files with SHA-256 and the fit plan, as shown."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.catalog._gguf_info import read_gguf
from desktop.root.context import AppContext
from desktop.ui.common.qmodels import human_size
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.tiny_gguf import TINY_TEMPLATE
from tests.ui.conftest import CAT_FILE, CAT_ID, wait_listed

pytestmark = pytest.mark.qt


def _open_details(qtbot, win: MainWindow, model_id: str):
    view = win.models
    win.show_page("models")
    row = next(
        n for n in range(view.table_model.rowCount()) if view.table_model.row_at(n).id == model_id
    )
    view.table.selectRow(row)
    assert view.details_button.isEnabled()
    with qtbot.waitSignal(view.details_shown, timeout=20_000):
        qtbot.mouseClick(view.details_button, Qt.MouseButton.LeftButton)
    dialog = view.details_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_an_imported_model_shows_its_header_files_and_fit(
    qtbot, window: MainWindow, tiny_chat: Path
) -> None:
    model_id = window.chat.current.model
    dialog = _open_details(qtbot, window, model_id)
    shown = {key: label.text() for key, label in dialog.values.items()}
    info = read_gguf(tiny_chat)
    digest = hashlib.sha256(tiny_chat.read_bytes()).hexdigest()
    assert shown["architecture"] == "llama"
    assert shown["trained_context"] == f"{info.context_length:,}"
    assert shown["layers"] == str(info.block_count)
    assert str(tiny_chat) in shown["files"] and f"SHA-256 {digest}" in shown["files"]
    assert shown["licence"].startswith("not in the catalog")
    # This machine has no GPU the tests use: the plan keeps every layer on the CPU.
    assert shown["gpu_layers"] == "none (runs on the CPU)"
    context = int(shown["context"].replace(",", ""))
    assert shown["kv_cache"].startswith(human_size(info.kv_bytes_per_token() * context))
    assert shown["template_source"] == "the GGUF file"
    assert dialog.template.toPlainText() == TINY_TEMPLATE
    assert dialog.template.isReadOnly()
    assert shown["vision"] == "no"


def test_a_vision_model_says_it_sees_and_lists_its_projector(
    qtbot, window: MainWindow, tiny_chat: Path, tiny_projector: Path
) -> None:
    window.context.installed.import_file(tiny_chat, projector=tiny_projector)
    dialog = _open_details(qtbot, window, window.chat.current.model)
    assert dialog.values["vision"].text() == f"yes (projector {tiny_projector.name})"
    digest = hashlib.sha256(tiny_projector.read_bytes()).hexdigest()
    assert f"SHA-256 {digest}" in dialog.values["files"].text()


def test_a_catalog_model_shows_its_licence_and_name(
    qtbot, hub: FakeHub, tiny_chat: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    wait_listed(qtbot, win)
    view = win.models
    assert view.download(CAT_ID) is not None
    qtbot.waitUntil(
        lambda: any(
            view.table_model.row_at(n).id == CAT_ID and view.table_model.row_at(n).installed
            for n in range(view.table_model.rowCount())
        ),
        timeout=20_000,
    )
    dialog = _open_details(qtbot, win, CAT_ID)
    entry = win.context.catalog.get(CAT_ID)
    assert dialog.values["name"].text() == entry.name
    assert dialog.values["licence"].text() == entry.license
    assert CAT_FILE in dialog.values["files"].text()
    assert dialog.windowTitle() == f"Model details: {CAT_ID}"
    win.close()
