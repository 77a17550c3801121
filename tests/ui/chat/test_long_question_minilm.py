"""The report that opened issue 35, in the window: Settings → Context length 4096, a
collection embedded with MiniLM (512 trained positions), a pasted 6 KB question in a
chat grounded in it. The whole app once vanished (``GGML_ASSERT(i01 >= 0 && i01 <
ne01)``); now the question is windowed for MiniLM, searched and answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.ui.shell.main_window import MainWindow
from tests.benchmarks.bench_retrieval_quality import minilm_path
from tests.ui.conftest import send

pytestmark = [pytest.mark.qt, pytest.mark.slow]


def test_a_6kb_question_grounded_in_minilm_at_context_4096_is_answered(
    qtbot, edgedesk_home: Path, gemma_path: Path, tmp_path: Path
) -> None:
    minilm = minilm_path()
    assert minilm.exists(), f"the MiniLM test model is missing: {minilm}"
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(
        f'embedding_model = "{minilm}"\n[engine]\ncontext_length = 4096\n'
    )
    docs = tmp_path / "zoo"
    docs.mkdir()
    (docs / "zoo.txt").write_text("The zebra lives in the zoo and eats hay.\n")
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    try:
        win.use_model(win.models.import_file(gemma_path))
        with qtbot.waitSignal(win.documents.indexing_finished, timeout=120_000):
            win.documents.add("zoo", [docs])
        chat = win.chat
        chat.collection_box.setCurrentIndex(chat.collection_box.findData("zoo"))
        question = ("where does the zebra live and what does it eat there? " * 120)[:6144]
        answer = send(qtbot, win, question, max_tokens=4, timeout=240_000)
        assert answer is not None and answer.content
        assert [Path(h.path).name for h in answer.sources] == ["zoo.txt"]
        assert win.isVisible()
    finally:
        win.close()
