"""The Models screen enables each button only where it can act on the selected row (the
window walk found Pause and Remove live for a model not on this device)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.root.context import AppContext
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import CAT_ID, wait_listed

pytestmark = pytest.mark.qt


def _open(qtbot, context: AppContext) -> MainWindow:
    win = MainWindow(context)
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


def _enabled(win: MainWindow) -> set[str]:
    view = win.models
    buttons = {
        "download": view.download_button,
        "pause": view.pause_button,
        "cancel": view.cancel_button,
        "remove": view.remove_button,
        "details": view.details_button,
        "load": view.load_button,
        "use": view.use_button,
        "import": view.import_button,
    }
    return {name for name, button in buttons.items() if button.isEnabled()}


def test_each_button_is_enabled_only_where_it_can_act(
    qtbot, context: AppContext, tiny_chat: Path
) -> None:
    win = _open(qtbot, context)
    assert _enabled(win) == {"import"}  # nothing selected: nothing to act on
    _select(win, CAT_ID)  # in the catalog, not on this device, not downloading
    assert _enabled(win) == {"download", "import"}
    model_id = win.models.import_file(tiny_chat)
    _select(win, model_id)  # on this device
    assert _enabled(win) == {"remove", "details", "load", "use", "import"}
    win.close()
