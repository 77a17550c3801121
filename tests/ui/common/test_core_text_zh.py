"""Text the core makes in English (machine summary, fit verdicts) is translated in the window."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.catalog._fit import GPU, Hardware, Verdict
from desktop.root.context import AppContext
from desktop.ui.common.core_text import machine_summary, verdict_text
from desktop.ui.shell.first_run import FirstRunDialog
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import wait_listed

pytestmark = pytest.mark.qt

GIB = 1024**3
ENGLISH = [*(str(v) for v in Verdict), "GiB free", "CPU threads", "no GPU detected"]
CHINESE_VERDICTS = ("适合 GPU", "内存可容纳，较慢", "内存可容纳，较慢（CPU）", "无法运行")


def english_in(text: str) -> list[str]:
    return [word for word in ENGLISH if word in text]


def test_the_chinese_models_screen_and_first_run_show_no_english_core_text(
    qtbot, chinese: None, tiny_chat: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.models.import_file(tiny_chat)  # an imported file's verdict too
    wait_listed(qtbot, win)
    view = win.models
    texts = [view.hardware_label.text()]
    model = view.table_model
    texts += [str(model.index(n, 5).data()) for n in range(model.rowCount())]
    assert any(v in t for t in texts[1:] for v in CHINESE_VERDICTS)
    dialog = FirstRunDialog(view, win.context.paths.data_dir, win.context.hardware, win)
    qtbot.addWidget(dialog)
    texts += [dialog.machine.text(), dialog.choice.text()]
    assert any(v in dialog.choice.text() for v in CHINESE_VERDICTS)
    assert "本机" in dialog.machine.text()
    assert [(t, english_in(t)) for t in texts if english_in(t)] == []
    win.close()


def test_machine_summary_in_chinese_keeps_the_numbers_and_gpu_names(chinese: None) -> None:
    hardware = Hardware(24 * GIB, 12 * GIB, 8, (GPU("NVIDIA RTX 4060", 8 * GIB, 6 * GIB),))
    text = machine_summary(hardware)
    assert "12.0 GiB" in text and "24.0 GiB" in text and "8 " in text
    assert "NVIDIA RTX 4060" in text and "6.0 GiB" in text and "8.0 GiB" in text
    assert english_in(text) == []
    assert "未检测到 GPU" in machine_summary(Hardware(24 * GIB, 12 * GIB, 8))


def test_in_english_the_window_says_what_the_terminal_says(qapp) -> None:
    for hardware in (
        Hardware(24 * GIB, 12 * GIB, 8),
        Hardware(24 * GIB, 12 * GIB, 8, (GPU("RTX", 8 * GIB, 6 * GIB),)),
    ):
        assert machine_summary(hardware) == hardware.describe()
    assert [verdict_text(str(v)) for v in Verdict] == [str(v) for v in Verdict]
    assert verdict_text("—") == "—"
