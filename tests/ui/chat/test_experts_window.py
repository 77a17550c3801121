"""Where a mixture-of-experts model's experts go, chosen in the chat's parameters panel
(issue 46, scope 1: "per model in the window's model parameters"). The suite's tiny MoE
GGUF is loaded in this process, so llama.cpp's own log shows which tensors it kept in
RAM; a dense model is offered no such choice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.tiny_moe import write_tiny_moe
from tests.ui.conftest import send

pytestmark = pytest.mark.qt
LEFT = Qt.MouseButton.LeftButton


def _in_ram(log: list[str]) -> set[str]:
    return {m.group(1) for line in log if (m := re.search(r"tensor (\S+) .* to CPU", line))}


def test_choosing_the_first_layer_in_ram_loads_the_moe_model_so(
    qtbot, tmp_path: Path, tiny_chat: Path, llama_log: list[str], context: AppContext
) -> None:
    context.apply_settings({"engine.worker_process": False})  # llama.cpp's log is ours
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    dense = win.models.import_file(tiny_chat)
    moe = win.models.import_file(write_tiny_moe(tmp_path / "tiny-moe.gguf"))
    chat = win.chat
    panel = chat.header.parameters
    qtbot.mouseClick(chat.header.parameters_button, LEFT)
    qtbot.waitUntil(lambda: context.resolver_built, timeout=30_000)

    win.use_model(dense)
    assert panel.isVisible() and not panel.experts.isVisible()  # a dense model: no experts
    win.use_model(moe)
    assert panel.experts.isVisible() and panel.experts.choice.currentText() == "Auto"
    answer = send(qtbot, win, "hello", max_tokens=3)
    assert answer is not None
    [loaded] = context.scheduler.loaded()
    assert loaded.report.n_cpu_moe == 0 and _in_ram(llama_log) == set()  # Auto, no GPU

    choice = panel.experts.choice
    choice.setCurrentIndex(choice.findText("First N layers in RAM"))
    assert panel.experts.layers.isVisible() and panel.experts.layers.maximum() == 2
    panel.experts.layers.setValue(1)
    assert chat.current is not None and chat.current.cpu_moe == 1
    llama_log.clear()
    send(qtbot, win, "again", max_tokens=3)
    [loaded] = context.scheduler.loaded()
    assert loaded.report.n_cpu_moe == 1  # reloaded with the chat's placement
    assert _in_ram(llama_log) == {f"blk.0.ffn_{p}_exps.weight" for p in ("gate", "up", "down")}

    # Kept with the chat: shown again when it is reopened.
    store_id = chat.current.store_id
    win.close()
    if context.data_lock is not None:
        context.data_lock.release()
    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    reopened = next(c for c in again.chat.chats.chats() if c.store_id == store_id)
    again.chat.select(reopened)
    assert reopened.cpu_moe == 1
    assert again.chat.header.parameters.experts.value() == 1
    again.close()
