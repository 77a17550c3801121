"""A real window over a real scheduler and the tiny chat model (offscreen Qt)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.root.context import AppContext
from desktop.ui.common.look import install_translator
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub


@pytest.fixture
def window(qtbot, context: AppContext, tiny_chat: Path) -> Iterator[MainWindow]:
    """The main window with the tiny chat model imported and chosen for the chat."""
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.activateWindow()
    qtbot.waitActive(win)  # keyboard shortcuts only reach an active window
    model_id = win.models.import_file(tiny_chat)
    win.use_model(model_id)
    yield win
    win.close()


def send(qtbot, win: MainWindow, text: str, *, max_tokens: int = 48, timeout: int = 30_000):
    """Type ``text``, press Send, and wait for the answer to finish; returns the answer turn."""
    chat = win.chat
    assert chat.current is not None
    chat.current.max_tokens = max_tokens
    chat.input.setPlainText(text)
    with qtbot.waitSignal(chat.generation_finished, timeout=timeout) as finished:
        qtbot.mouseClick(chat.send_button, _left())
    return finished.args[0]


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


CAT_ID = "glm-edge-1.5b"
CAT_REPO = "THUDM/glm-edge-1.5b-chat-gguf"
CAT_FILE = "ggml-model-Q4_K_M.gguf"


@pytest.fixture
def hub(hub: FakeHub, tiny_chat: Path) -> FakeHub:
    """The shared fake Hub (tests/conftest.py) serving the tiny model as the catalog's
    GLM-Edge 1.5B."""
    hub.add_repo(CAT_REPO, {CAT_FILE: tiny_chat.read_bytes()}, downloads=50)
    return hub


@pytest.fixture
def chinese(qapp) -> Iterator[None]:
    """The app's Chinese translation installed for this test, removed after it."""
    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    yield
    qapp.removeTranslator(translator)


@pytest.fixture(autouse=True)
def _gui_thread_gc_everywhere_here(gui_thread_gc: None) -> None:
    """Every window test collects cyclic garbage on the GUI thread (tests/conftest.py)."""


def wait_listed(qtbot, win: MainWindow) -> None:
    """Wait until the Models screen shows the rows its worker read from disk."""
    qtbot.waitUntil(lambda: win.models.is_listed, timeout=20_000)
