"""Chinese on a computer without a Chinese font (issue 37, item 7): the window says why
its words would be boxes and what to install, in English; Settings says up front that a
language change needs a restart. The fontless computer is real: a fontconfig that knows
only DejaVu, on Xvfb with a window manager (offscreen where there is no X11)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFormLayout, QLabel

from desktop.root.context import AppContext
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt
LATIN_ONLY = Path("/usr/share/fonts/truetype/dejavu")

SCRIPT = r"""
import json
from PySide6.QtWidgets import QApplication
from desktop.root.context import build_context
from desktop.base.config import NoPolicy
from desktop.ui.common.look import install_translator
from desktop.ui.shell.main_window import MainWindow
app = QApplication([])
translator = install_translator(app, "zh_CN")
win = MainWindow(build_context(policy=NoPolicy()))
win.show()
app.processEvents()
dialog = win.open_settings()
dialog.language.setCurrentIndex(dialog.language.findData("en"))
dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
print(json.dumps({"banner": win.font_banner.text(), "shown": win.font_banner.isVisible(),
                  "note": dialog.language_note.text()}))
dialog.reject()
win.close()
"""


def test_without_a_chinese_font_the_window_says_what_to_install(
    tmp_path: Path, edgedesk_home: Path
) -> None:
    if not LATIN_ONLY.is_dir():
        pytest.skip(f"needs the DejaVu fonts in {LATIN_ONLY}")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">'
        f"<fontconfig><dir>{LATIN_ONLY}</dir><cachedir>{tmp_path / 'fc'}</cachedir>"
        "</fontconfig>"
    )
    (edgedesk_home / "config").mkdir(parents=True)
    (edgedesk_home / "config" / "settings.toml").write_text('language = "zh_CN"\n')
    env = {
        **os.environ,
        "FONTCONFIG_FILE": str(conf),
        "EDGEDESK_HOME": str(edgedesk_home),
        "QT_QPA_PLATFORM": "offscreen",
    }
    from tests.ui.shell.test_tray_session import MISSING, _x_session, script_report

    if MISSING:
        seen = script_report(SCRIPT, env)
    else:
        with _x_session(tmp_path) as x_env:
            seen = script_report(
                SCRIPT, {**env, "DISPLAY": x_env["DISPLAY"], "QT_QPA_PLATFORM": "xcb"}
            )
    assert seen["shown"] and "fonts-noto-cjk" in str(seen["banner"])
    assert "boxes" in str(seen["banner"])  # why, in words that need no Chinese font
    assert "fonts-noto-cjk" in str(seen["note"])  # said on picking it in Settings too


def test_settings_says_up_front_that_a_language_change_needs_a_restart(
    qtbot, edgedesk_home: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    form = dialog.findChild(QFormLayout)
    label = form.labelForField(dialog.language) or form.labelForField(
        dialog.language.parentWidget()
    )
    assert isinstance(label, QLabel) and "restart" in label.text()
    dialog.reject()
    win.close()
