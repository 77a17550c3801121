"""Settings saved from the dialog, policy locks, themes and the Chinese UI."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from desktop.base.config import NoPolicy, load_settings
from desktop.root.context import AppContext, build_context
from desktop.ui.common.look import RESOURCES, apply_theme, install_translator
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


class ForceOffline:
    def forced(self) -> dict[str, object]:
        return {"offline": True}


def test_saved_settings_are_written_reloaded_and_applied(qtbot, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    dialog.keep_alive.setValue(5)
    dialog.context_length.setValue(4096)
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    dialog.retention.setValue(30)
    dialog.keep_in_tray.setChecked(True)
    dialog.accept()
    saved = tomllib.loads(context.paths.settings_file.read_text(encoding="utf-8"))
    assert saved == {
        "engine": {"keep_alive_s": 300.0, "context_length": 4096},
        "theme": "dark",
        "retention_days": 30,
        "keep_in_tray": True,
    }
    reloaded = load_settings(context.paths).settings
    assert reloaded.engine.keep_alive_s == 300.0 and reloaded.theme == "dark"
    assert context.scheduler.keep_alive_s == 300.0  # in force without a restart
    assert context.settings.keep_in_tray  # the next close asks the tray
    assert context.resolver.engine_settings.context_length == 4096
    assert "#1b1d22" in QApplication.instance().styleSheet()  # the dark sheet is applied

    again = win.open_settings()  # back to automatic: the key leaves the file
    assert again.context_length.value() == 4096
    again.context_length.setValue(again.context_length.minimum())
    again.accept()
    saved = tomllib.loads(context.paths.settings_file.read_text(encoding="utf-8"))
    assert "context_length" not in saved["engine"]
    assert context.resolver.engine_settings.context_length is None
    apply_theme(QApplication.instance(), "light")
    win.close()


def test_ticking_offline_in_the_window_closes_the_network_gate_at_once(
    qtbot, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    assert context.net.refusal(download=True) is None  # the gate is built while online
    dialog = win.open_settings()
    dialog.offline.setChecked(True)
    dialog.accept()
    assert context.net.refusal(download=True) is not None  # Hub and downloads refused
    again = win.open_settings()
    again.offline.setChecked(False)
    again.accept()
    assert context.net.refusal(download=True) is None
    win.close()


def test_policy_locked_settings_are_shown_disabled(qtbot) -> None:
    context = build_context(policy=ForceOffline())
    dialog = SettingsDialog(context.paths, context.effective)
    qtbot.addWidget(dialog)
    assert dialog.offline.isChecked() and not dialog.offline.isEnabled()
    assert dialog.offline.toolTip() == "set by your organization"
    assert dialog.keep_alive.isEnabled()
    dialog.offline.setChecked(False)  # even if forced through, it is not saved
    assert "offline" not in dialog.changes()


def test_chinese_ui_loads(qtbot, context: AppContext) -> None:
    app = QApplication.instance()
    translator = install_translator(app, "zh_CN")
    assert translator is not None
    try:
        win = MainWindow(context)
        qtbot.addWidget(win)
        assert win.nav_buttons["chat"].text() == "聊天"
        assert win.chat.send_button.text() == "发送"
        assert win.models.table_model.headerData(5, _horizontal()) == "适配"
        assert win.nav_buttons["documents"].text() == "文档"
        assert win.documents.summary.text().startswith("创建文档集")
        assert win.chat.temperature.prefix() == "温度 "  # moved to ChatHeader, still translated
        assert win.chat.collection_box.itemText(0) == "不使用文档"
        win.close()
    finally:
        app.removeTranslator(translator)
    english = MainWindow(build_context(policy=NoPolicy()))  # closing the first closed its context
    qtbot.addWidget(english)
    assert english.nav_buttons["chat"].text() == "Chats"
    english.close()


def test_compiled_translations_match_their_source(tmp_path: Path) -> None:
    lrelease = shutil.which("pyside6-lrelease") or str(
        Path(__file__).resolve().parents[3] / ".venv" / "bin" / "pyside6-lrelease"
    )
    if not Path(lrelease).exists():
        pytest.skip("pyside6-lrelease is not installed")
    out = tmp_path / "zh.qm"
    source = RESOURCES / "translations" / "edgedesk_zh_CN.ts"
    subprocess.run([lrelease, str(source), "-qm", str(out)], check=True, capture_output=True)
    committed = RESOURCES / "translations" / "edgedesk_zh_CN.qm"
    assert out.read_bytes() == committed.read_bytes(), "run pyside6-lrelease on the .ts file"
    assert 'type="unfinished"' not in source.read_text(encoding="utf-8")


def test_every_string_in_the_window_has_a_chinese_translation(tmp_path: Path) -> None:
    lupdate = shutil.which("pyside6-lupdate") or str(
        Path(__file__).resolve().parents[3] / ".venv" / "bin" / "pyside6-lupdate"
    )
    if not Path(lupdate).exists():
        pytest.skip("pyside6-lupdate is not installed")
    ui = Path(__file__).resolve().parents[3] / "desktop" / "ui"
    scratch = tmp_path / "edgedesk_zh_CN.ts"
    shutil.copy(RESOURCES / "translations" / "edgedesk_zh_CN.ts", scratch)
    subprocess.run(
        [lupdate, *map(str, sorted(ui.rglob("*.py"))), "-ts", str(scratch)],
        check=True,
        capture_output=True,
    )
    text = scratch.read_text(encoding="utf-8")
    untranslated = [
        chunk.split("<source>")[1].split("</source>")[0]
        for chunk in text.split("<message>")[1:]
        if 'type="unfinished"' in chunk
    ]
    assert untranslated == [], "translate these in resources/translations/edgedesk_zh_CN.ts"


def _horizontal():
    from PySide6.QtCore import Qt

    return Qt.Orientation.Horizontal


def test_data_location_moves_everything_at_the_next_start(
    qtbot, monkeypatch, tmp_path: Path, context: AppContext
) -> None:
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    chat = context.chat_store.create_conversation("kept across the move")
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    row = dialog.location
    assert row.path_label.text() == str(context.paths.data_dir)
    assert not row.keep_button.isVisible()
    target = tmp_path / "bigger-disk"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(target))

    def click_move(box: QMessageBox) -> int:
        assert "Move your chats" in box.text()
        # The data's size as every screen writes sizes (the database: some KB).
        assert re.search(r"models \(\d+(\.\d)? [KM]?B\) to ", box.text()), box.text()
        box.buttons()[0].click()  # "Move my data"
        return 0

    monkeypatch.setattr(QMessageBox, "exec", click_move)
    row.change_button.click()
    assert str(target) in row.pending_label.text() and row.keep_button.isVisibleTo(dialog)
    assert row.choose(context.paths.data_dir / "sub", move=True) is not None  # refused
    dialog.accept()
    win.close()
    context.chat_store.close()
    context.data_lock.release()  # the window's process has quit

    restarted = build_context(policy=NoPolicy(), apply_moves=True)
    assert restarted.paths.data_dir == target
    assert restarted.notice is not None and str(target) in restarted.notice
    assert [c.id for c in restarted.chat_store.list_conversations()] == [chat.id]
    restarted.chat_store.close()
    restarted.data_lock.release()


def test_keep_here_withdraws_a_requested_move(qtbot, tmp_path: Path, context: AppContext) -> None:
    dialog = SettingsDialog(context.paths, context.effective)
    qtbot.addWidget(dialog)
    assert dialog.location.choose(tmp_path / "elsewhere", move=False) is None
    dialog.save()
    again = SettingsDialog(context.paths, context.effective)
    qtbot.addWidget(again)
    assert str(tmp_path / "elsewhere") in again.location.pending_label.text()
    again.location.keep_button.click()
    again.save()
    context.data_lock.release()
    assert (
        build_context(policy=NoPolicy(), apply_moves=True).paths.data_dir == context.paths.data_dir
    )


def test_a_policy_data_location_cannot_be_changed(qtbot, tmp_path: Path) -> None:
    class Pinned:
        def forced(self) -> dict[str, object]:
            return {"data_location": str(tmp_path / "srv")}

    context = build_context(policy=Pinned())
    dialog = SettingsDialog(context.paths, context.effective)
    qtbot.addWidget(dialog)
    assert dialog.location.path_label.text() == str(tmp_path / "srv")
    assert not dialog.location.change_button.isEnabled()
    assert "organization" in dialog.location.change_button.toolTip()


def test_a_long_move_at_start_shows_progress(qtbot) -> None:
    from PySide6.QtWidgets import QProgressDialog

    from desktop.ui.shell.app import _move_progress

    report = _move_progress()
    report(3 * 10**9, 12 * 10**9)
    # Visible ones only: an earlier test's window may still own a hidden progress box.
    shown = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QProgressDialog) and w.isVisible()
    ]
    assert len(shown) == 1 and shown[0].value() == 250
    report(12 * 10**9, 12 * 10**9)
    shown[0].close()
    shown[0].deleteLater()


def test_settings_shows_the_hardware_report_read_only(qtbot, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    panel = dialog.hardware.text
    assert panel.isReadOnly()
    qtbot.waitUntil(lambda: "backend:" in panel.toPlainText(), timeout=60_000)
    text = panel.toPlainText()
    # The same words `edgedesk doctor` prints: this CI machine runs the CPU build.
    assert "backend:   cpu" in text and "GPU:       not used" in text
    assert "scripts/install.sh" in text
    dialog.reject()
