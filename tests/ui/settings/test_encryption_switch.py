"""Encryption at rest in the window: the Settings switch (on a worker) and the passphrase prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from desktop.base.config import NoPolicy
from desktop.policy import MachinePolicy
from desktop.root.context import AppContext, build_context
from desktop.store import _cipher as cipher
from desktop.store._chat_records import ChatMessage
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.settings.encryption import PassphraseDialog, passphrase_check, unlock_at_start
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt
SECRET = "zanzibarquokkasecret"


def _on_disk(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in [path, *cipher.sidecars(path)] if p.exists())


def test_the_settings_switch_encrypts_and_decrypts_on_a_worker_keeping_every_chat(
    qtbot, file_keyring: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    # Turning protection off is asked first (issue 50, item 7): the user says yes.
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    context = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    conv = context.chat_store.create_conversation("private", "m")
    context.chat_store.add_message(conv.id, ChatMessage("user", SECRET))
    win = MainWindow(context)
    qtbot.addWidget(win)
    database = context.paths.database
    assert cipher.file_state(database) == "plaintext"

    dialog = win.open_settings()
    assert dialog.encryption is not None and not dialog.encryption.check.isChecked()
    dialog.encryption.check.setChecked(True)
    dialog.accept()
    progress = win.encryption_switch
    with qtbot.waitSignal(progress.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [True]
    # Every stage was shown: copied, checked row for row, renamed into place.
    assert progress.stages == ["planned", "exported", "verified", "renamed", "done"]
    assert cipher.file_state(database) == "encrypted"
    assert SECRET.encode() not in _on_disk(database)
    assert [h.conversation_id for h in context.chat_store.search(SECRET)] == [conv.id]

    again = win.open_settings()
    assert again.encryption is not None and again.encryption.check.isChecked()
    assert "OS keyring" in again.encryption.state.text()
    again.encryption.check.setChecked(False)
    again.accept()
    with qtbot.waitSignal(win.encryption_switch.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [True]
    assert cipher.file_state(database) == "plaintext"
    assert [m.content for m in context.chat_store.get_messages(conv.id)] == [SECRET]
    win.close()
    context.close()


def test_without_a_keyring_the_switch_offers_a_passphrase_and_cancel_changes_nothing(
    qtbot, context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text: shown.append(text))
    context.chat_store.create_conversation("c", "m")
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    assert dialog.encryption is not None
    dialog.encryption.check.setChecked(True)
    dialog.accept()
    with qtbot.waitSignal(win.encryption_switch.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [False]
    offer = win.encryption_switch.offer
    assert shown == [] and offer is not None and "keyring" in offer.intro.text()
    offer.reject()
    assert win.encryption_switch.next is None
    assert cipher.file_state(context.paths.database) == "plaintext"
    assert [c.title for c in context.chat_store.list_conversations()] == ["c"]
    win.close()


def test_policy_encrypt_at_rest_disables_the_switch_with_the_reason(
    qtbot, file_keyring: Path
) -> None:
    context = build_context(policy=MachinePolicy("test", {"EncryptAtRest": True}))
    context.chat_store.create_conversation("c", "m")
    dialog = SettingsDialog(context.paths, context.effective, encryption=context.at_rest.status())
    qtbot.addWidget(dialog)
    switch = dialog.encryption
    assert switch is not None
    assert switch.check.isChecked() and not switch.check.isEnabled()
    assert "EncryptAtRest" in switch.reason
    assert switch.wanted() is None
    context.close()


def test_the_passphrase_is_asked_until_it_opens_the_data(qtbot) -> None:
    first = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    first.chat_store.create_conversation("kept", "m")
    first.switch_encryption(True, passphrase="correct horse")
    first.close()

    context = build_context(policy=NoPolicy())
    assert context.at_rest.needs_passphrase()
    dialog = PassphraseDialog(passphrase_check(context))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.field, "wrong horse")
    dialog.accept()
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert "does not open" in dialog.problem.text()
    assert context.at_rest.needs_passphrase()
    dialog.field.clear()
    qtbot.keyClicks(dialog.field, "correct horse")
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert [c.title for c in context.chat_store.list_conversations()] == ["kept"]
    context.close()


def test_the_start_asks_only_for_a_passphrase_database_and_cancel_stops_it(
    qtbot, file_keyring: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []

    def cancelled(_dialog: PassphraseDialog) -> int:
        asked.append(True)
        return int(QDialog.DialogCode.Rejected)

    monkeypatch.setattr(PassphraseDialog, "exec", cancelled)
    keyring_db = build_context(policy=NoPolicy())
    keyring_db.chat_store.create_conversation("c", "m")  # a new install: keyring-encrypted
    assert keyring_db.at_rest.status()["key_source"] == "OS keyring"
    assert unlock_at_start(keyring_db) and asked == []
    keyring_db.switch_encryption(False)
    keyring_db.switch_encryption(True, passphrase="correct horse")
    keyring_db.close()
    assert keyring_db.data_lock is not None
    keyring_db.data_lock.release()

    later = build_context(policy=NoPolicy())
    assert not unlock_at_start(later) and asked == [True]
    assert later.at_rest.needs_passphrase()  # nothing opened, nothing changed
    assert cipher.file_state(later.paths.database) == "encrypted"
