"""While the model reads a long conversation, the answer's bubble says how far it got
(the walk saw "…" for a minute on a long prompt); its words replace it."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QTextDocument

from desktop.engine._types import ChatCall, Delta, Usage
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


class _SlowReader:
    """A local model reading a 3,000-token prompt: 1,536 tokens read, then it waits for
    the test before the rest and the answer (the engine's own progress events are
    tested in tests/engine/batching/test_reading_progress.py)."""

    def __init__(self) -> None:
        self.read_half = threading.Event()
        self.go_on = threading.Event()
        self.calls: list[ChatCall] = []

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        self.calls.append(call)
        yield Delta(read=(0, 3000))
        yield Delta(read=(1536, 3000))
        self.read_half.set()
        self.go_on.wait(30)
        yield Delta(read=(2560, 3000))
        yield Delta(text="Lighthouses")
        yield Delta(text=" guide ships.")
        yield Delta(finish_reason="stop", usage=Usage(3000, 3))


def _shown(bubble) -> str:
    document = QTextDocument()
    document.setHtml(bubble.body_html())
    return document.toPlainText().strip()


def test_the_answer_says_how_far_the_model_read_until_its_words_come(
    qtbot, window: MainWindow
) -> None:
    chat = window.chat
    reader = _SlowReader()
    chat.core.streamer = reader
    chat.input.setPlainText("Tell me about lighthouses.")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        chat.send()
        qtbot.waitUntil(reader.read_half.is_set, timeout=10_000)
        answer = chat._bubbles[-1]
        reading = "Reading the conversation: 1,536 of 3,000 tokens (51%)…"
        qtbot.waitUntil(lambda: _shown(answer) == reading, timeout=10_000)
        reader.go_on.set()
    assert _shown(chat._bubbles[-1]) == "Lighthouses guide ships."
    assert reader.calls[0].progress  # the window asks the engine for it
