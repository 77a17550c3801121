"""The model's worker dies mid-answer: the window stays, says what happened with
llama.cpp's last words, keeps what was written, and the next message is answered.

A real window, the real scheduler and a real worker process killed with SIGABRT (what a
failed ``GGML_ASSERT`` does) while it streams.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil

from desktop.engine._scheduler import CRASHES_TO_BROKEN
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.tiny_gguf import write_tiny_llama
from tests.ui.conftest import _left, send, wait_listed


def test_a_crash_mid_answer_is_said_under_it_and_the_next_message_answers(
    qtbot, window: MainWindow
) -> None:
    chat = window.chat
    chat.current.max_tokens = 1900
    chat.input.setPlainText("tell me a long story")
    model = chat.current.model
    with qtbot.waitSignal(chat.generation_finished, timeout=60_000):
        chat.send()
        qtbot.waitUntil(lambda: bool(chat.current.turns[-1].content), timeout=30_000)
        pid = window.context.scheduler.with_engine(model, lambda engine: engine.pid)
        os.kill(pid, signal.SIGABRT)
    turn = chat.current.turns[-1]
    assert turn.role == "assistant"
    assert turn.finish_reason == "error" and turn.content  # what was written is kept
    assert "stopped unexpectedly (aborted (SIGABRT)) and is reloading" in turn.error
    assert turn.error in chat._bubbles[-1].footer.text()  # said under the kept answer
    # Said once (issue 50, item 18): not again in the notice above the input.
    assert chat.notice.isHidden() or "stopped unexpectedly" not in chat.notice.text()
    assert window.isVisible()
    again = send(qtbot, window, "and now?", max_tokens=8)
    assert again is not None and again.content and again.finish_reason == "length"
    fresh = window.context.scheduler.with_engine(model, lambda engine: engine.pid)
    assert fresh != pid
    # The status bar's memory counts the model's worker, where the model now lives.
    window.refresh_status()
    shown = window.memory_status.text().removeprefix("Memory: ")
    worker = psutil.Process(fresh).memory_info().rss
    assert _mib(shown) * 2**20 >= worker + psutil.Process().memory_info().rss * 0.9


def test_a_model_that_aborts_on_load_is_said_with_llama_cpps_words(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    chat = window.chat
    bad = write_tiny_llama(tmp_path / "aborts.gguf", n_head_kv=3)
    window.use_model(window.models.import_file(bad))
    chat.input.setPlainText("hello")
    with qtbot.waitSignal(chat.error, timeout=60_000) as said:
        chat.send()
    message = said.args[0]
    assert "crashed while loading (aborted (SIGABRT)); EdgeDesk was not affected" in message
    assert "llama.cpp's last words:" in message
    assert "GGML_ASSERT(ggml_can_mul_mat(k, q)) failed" in message
    assert "/ggml.c" not in message  # the line, not the folder llama.cpp was built in
    assert window.isVisible()
    assert [t.role for t in chat.current.turns] == ["user"]  # the question is kept


def test_the_models_screen_marks_a_model_broken_and_retry_clears_it(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    view = window.models
    model_id = view.import_file(write_tiny_llama(tmp_path / "aborts.gguf", n_head_kv=3))
    wait_listed(qtbot, window)

    def row() -> int:
        model = view.table_model
        return next(n for n in range(model.rowCount()) if model.row_at(n).id == model_id)

    view.table.selectRow(row())
    for _ in range(CRASHES_TO_BROKEN):
        with qtbot.waitSignal(view.error, timeout=60_000):
            view.load(model_id)
    status = view.table_model.index(row(), 6).data()
    assert status == "broken: crashed on every load"
    view.table.selectRow(row())
    assert view.retry_button.isVisibleTo(view)
    assert "GGML_ASSERT" in view.status.text()
    assert window.context.broken_models.reason(model_id)  # what models info reads too
    qtbot.mouseClick(view.retry_button, _left())
    assert window.context.broken_models.reason(model_id) is None
    assert view.table_model.index(row(), 6).data() == "installed"
    assert not view.retry_button.isVisibleTo(view)


def _mib(text: str) -> float:
    """``188.4 MiB`` / ``1.2 GiB`` as MiB."""
    number, unit = text.split()
    return float(number) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]
