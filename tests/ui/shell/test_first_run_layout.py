"""The first-run dialog shows all of its text: no label is cut off, in English or Chinese."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from desktop.root.context import AppContext
from desktop.ui.common.core_text import verdict_text
from desktop.ui.common.look import apply_theme, install_translator
from desktop.ui.shell.first_run import FirstRunDialog
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import wait_listed

pytestmark = pytest.mark.qt

LONG_MACHINE = (
    "RAM 22.0/23.6 GiB free, 64 CPU threads, NVIDIA GeForce RTX 4090 Laptop GPU "
    "15.2/16.0 GiB free, AMD Radeon RX 7900 XTX 23.1/24.0 GiB free"
)
LONG_STATUS = (
    "the model hub refused the connection: certificate verify failed, unable to "
    "get local issuer certificate; set a CA bundle in Settings or ask IT " * 2
)


@pytest.fixture(params=["en", "zh_CN"])
def language(request, qapp) -> Iterator[str]:
    """The window's theme (its larger title font) and, for zh_CN, the Chinese translator."""
    apply_theme(qapp, "light")
    translator = install_translator(qapp, request.param) if request.param != "en" else None
    yield request.param
    if translator is not None:
        qapp.removeTranslator(translator)
    qapp.setStyleSheet("")


def clipped(dialog: FirstRunDialog) -> list[str]:
    """The visible labels whose text needs more room than they were given."""
    bad = []
    for label in dialog.findChildren(QLabel):
        if not label.isVisible() or not label.text():
            continue
        size = label.size()
        hint = label.sizeHint()
        if label.wordWrap():
            fits = label.heightForWidth(size.width()) <= size.height()
        else:
            fits = hint.width() <= size.width() and hint.height() <= size.height()
        if not fits:
            bad.append(f"{label.text()!r}: needs {hint}, shown {size}")
    return bad


def test_every_label_fits_its_text(qtbot, language: str, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    wait_listed(qtbot, win)
    dialog = FirstRunDialog(win.models, win.context.paths.data_dir, LONG_MACHINE, win)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.recommended is not None
    assert verdict_text(dialog.recommended.fit) in dialog.choice.text()
    assert clipped(dialog) == []
    dialog._on_error(LONG_STATUS)  # a longer text later: the dialog grows
    QApplication.processEvents()
    assert clipped(dialog) == []
    dialog.resize(dialog.minimumWidth(), dialog.height())  # narrowest: more lines each
    QApplication.processEvents()
    assert clipped(dialog) == []
    win.close()
