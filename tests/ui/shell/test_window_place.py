"""The window opens where and as large as the user left it (window_place.py)."""

from __future__ import annotations

import pytest

from desktop.base.config import NoPolicy
from desktop.ui.shell.main_window import MainWindow
from desktop.ui.shell.window_place import FILE_NAME

pytestmark = pytest.mark.qt


def _open(qtbot) -> MainWindow:
    from desktop.root.context import build_context

    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    return win


def test_a_resized_window_opens_at_its_size_after_a_restart(qtbot) -> None:
    first = _open(qtbot)
    config = first.context.paths.config_dir
    width = first.size().width()
    first.resize(width, 600)  # (the test screen is 800 px wide: its height changes)
    qtbot.waitUntil(lambda: first.size().height() == 600)
    first.close()
    assert (config / FILE_NAME).is_file()

    again = _open(qtbot)
    assert (again.size().width(), again.size().height()) == (width, 600)
    again.close()


def test_a_damaged_place_file_gives_the_first_size(qtbot) -> None:
    first = _open(qtbot)
    config = first.context.paths.config_dir
    size = first.size()  # nothing saved yet: the first size for this screen
    first.resize(size.width(), 500)
    first.close()
    (config / FILE_NAME).write_text('{"geometry": "not base64 at all!"}')

    again = _open(qtbot)
    assert again.size() == size  # no crash, and not the damaged file's idea of a size
    again.close()
