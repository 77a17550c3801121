"""Where the model ran: said in the window's words under each answer (stored with it, so
a reopened answer says it too) and on the Models screen's load status."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.chat import Turn
from desktop.engine._types import Placement, Usage
from desktop.root.context import AppContext
from desktop.ui.chat.answer_footer import footer_text
from desktop.ui.common.core_text import placement_text
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import wait_listed

pytestmark = pytest.mark.qt

USAGE = Usage(prompt_tokens=6, completion_tokens=4)
ON_VULKAN = Placement(19, 19, ("Vulkan0 (llvmpipe)",))
PART = Placement(19, 10, ("CUDA0 (NVIDIA GeForce RTX 4070)",))


def _footer(placement: Placement | None) -> str:
    return footer_text(
        Turn(
            "assistant",
            "hi",
            usage=USAGE,
            tokens_per_s=0.5,
            finish_reason="stop",
            placement=placement,
        )
    )


def test_the_footer_says_where_a_local_model_ran(qapp) -> None:
    assert (
        _footer(ON_VULKAN) == "6 prompt · 4 tokens · 0.5 tok/s · 19/19 layers on Vulkan0 (llvmpipe)"
    )
    assert _footer(Placement(3)) == "6 prompt · 4 tokens · 0.5 tok/s · CPU only"
    assert _footer(None) == "6 prompt · 4 tokens · 0.5 tok/s"  # a remote model's answer


def test_placement_names_the_device_and_its_layers(qapp) -> None:
    assert placement_text(ON_VULKAN) == "19/19 layers on Vulkan0 (llvmpipe)"
    assert placement_text(Placement(3)) == "CPU only"
    assert placement_text(PART) == "10/19 layers on CUDA0 (NVIDIA GeForce RTX 4070), 9 on the CPU"


def test_placement_in_chinese_keeps_the_device_and_numbers(chinese) -> None:
    assert placement_text(ON_VULKAN) == "Vulkan0 (llvmpipe) 上 19/19 层"
    assert placement_text(Placement(3)) == "仅 CPU"
    assert "9 层在 CPU 上" in placement_text(PART) and "layers" not in placement_text(PART)


def test_a_model_loaded_on_the_models_screen_says_where_it_runs(
    qtbot, context: AppContext, tiny_chat: Path
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show_page("models")
    wait_listed(qtbot, win)
    view = win.models
    model_id = view.import_file(tiny_chat)

    def status() -> str:
        model = view.table_model
        row = next(n for n in range(model.rowCount()) if model.row_at(n).id == model_id)
        return str(model.index(row, 6).data() or "")

    view.load(model_id)
    qtbot.waitUntil(lambda: status().startswith("loaded"), timeout=30_000)
    # This CPU build of llama.cpp puts none of the tiny model's layers on a GPU.
    assert status().startswith("loaded · CPU only · ctx ")
    win.close()
