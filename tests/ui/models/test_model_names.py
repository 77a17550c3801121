"""Every model is named as it is used, its id: an imported file without ".gguf", on the
Models screen, in the chat and after a restart (the window walk found both spellings;
the catalog names models without an extension, as LM Studio and Jan do)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import wait_listed

pytestmark = pytest.mark.qt


def _open(qtbot, context: AppContext) -> MainWindow:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("models")
    wait_listed(qtbot, win)
    return win


def test_an_imported_model_is_named_without_gguf_everywhere(
    qtbot, context: AppContext, edgedesk_home: Path, tiny_chat: Path
) -> None:
    win = _open(qtbot, context)
    model_id = win.models.import_file(tiny_chat)
    assert model_id == tiny_chat.name.removesuffix(".gguf")
    win.use_model(model_id)
    model = win.models.table_model
    shown = [str(model.index(n, 0).data()) for n in range(model.rowCount())]
    assert model_id in shown and not any(name.endswith(".gguf") for name in shown)
    assert win.chat.model_box.currentText() == model_id  # the chat names it the same
    win.close()

    again = _open(qtbot, build_context(policy=NoPolicy()))  # read back from installed.json
    model = again.models.table_model
    shown = [str(model.index(n, 0).data()) for n in range(model.rowCount())]
    assert model_id in shown and not any(name.endswith(".gguf") for name in shown)
    again.show_page("chat")
    again.use_model(model_id)
    assert again.chat.model_box.currentText() == model_id
    again.close()
