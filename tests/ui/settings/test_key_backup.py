"""Recovery the user can perform, through the real window: the key backup offered once,
exported from Settings, a new passphrase typed twice, and a passphrase offered in place
where no OS keyring works."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.store import _cipher as cipher
from desktop.store._atrest import AtRest, ring_delete
from desktop.store._chat_records import ChatMessage
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt
CODE = re.compile(r"^(?:[A-Z2-7]{4}-){13}[A-Z2-7]{4}$")
SECRET = "zanzibarquokkasecret"


def _lose_the_key(database: Path) -> None:
    """A new user profile or a reset keyring: the key's entry is gone."""
    info = json.loads(Path(f"{database}.key.json").read_text())
    ring_delete(info["key_id"])


def _titles_after_import(text: str) -> list[str]:
    """Import ``text`` as the CLI's import-key does, then open the data afresh."""
    context = build_context(policy=NoPolicy())
    context.at_rest.import_key(text)
    titles = [c.title for c in context.chat_store.list_conversations()]
    context.close()
    assert context.data_lock is not None
    context.data_lock.release()
    return titles


def test_a_silently_encrypted_first_start_offers_the_backup_once_and_the_code_recovers(
    qtbot, file_keyring: Path, context: AppContext
) -> None:
    context.database_key  # noqa: B018 - run_app settles it first: a new install, encrypted
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    database = context.paths.database
    assert context.at_rest.status()["key_source"] == "OS keyring"

    setup = win.start_dialogs()
    assert setup is not None  # first-run setup goes first, once the window is on screen
    qtbot.waitUntil(setup.isVisible)
    assert win.key_backup is None
    setup.reject()
    dialog = win.key_backup
    assert dialog is not None and dialog.isVisible()
    assert "keyring" in dialog.intro.text() and not dialog.code.isVisible()
    qtbot.mouseClick(dialog.code_button, Qt.MouseButton.LeftButton)
    assert dialog.code.isVisible()
    code = dialog.code_text()
    assert CODE.match(code), code
    assert "import-key --code" in dialog.note.text()
    dialog.reject()
    for title in ("taxes", "doctor"):
        conv = context.chat_store.create_conversation(title, "m")
        context.chat_store.add_message(conv.id, ChatMessage("user", SECRET))
    assert cipher.file_state(database) == "encrypted"
    win.close()
    assert context.data_lock is not None
    context.data_lock.release()

    # The next start does not ask again.
    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    assert again.start_dialogs() is None
    assert again.key_backup is None
    again.close()
    assert again.context.data_lock is not None
    again.context.data_lock.release()

    _lose_the_key(database)
    assert _titles_after_import(code) == ["doctor", "taxes"]


def test_settings_exports_the_key_to_a_file_that_brings_the_data_back(
    qtbot, file_keyring: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, context: AppContext
) -> None:
    context.chat_store.create_conversation("kept", "m")
    AtRest(context.paths.database).backup_offered()  # offered at an earlier start
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    settings = win.open_settings()
    switch = settings.encryption
    assert switch is not None and switch.backup_button.isVisible()
    target = tmp_path / "usb stick" / "edgedesk-key.txt"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(switch.backup_button, Qt.MouseButton.LeftButton)
    dialog = win.key_backup
    assert dialog is not None and dialog.isVisible()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert str(target) in dialog.note.text()
    assert target.stat().st_mode & 0o077 == 0  # the owner's alone
    dialog.reject()
    settings.reject()
    win.close()
    assert context.data_lock is not None
    context.data_lock.release()

    _lose_the_key(context.paths.database)
    assert _titles_after_import(target.read_text()) == ["kept"]


def test_turning_encryption_on_in_settings_offers_the_backup(qtbot, file_keyring: Path) -> None:
    context = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    context.chat_store.create_conversation("c", "m")
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.start_dialogs()
    assert win.key_backup is None  # plaintext: no key to back up
    settings = win.open_settings()
    assert settings.encryption is not None
    settings.encryption.check.setChecked(True)
    settings.accept()
    with qtbot.waitSignal(win.encryption_switch.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [True]
    qtbot.waitUntil(lambda: win.key_backup is not None and win.key_backup.isVisible())
    assert not context.at_rest.backup_due()
    win.close()


def test_a_new_passphrase_typed_differently_twice_is_refused_in_settings(
    qtbot, file_keyring: Path
) -> None:
    context = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    context.chat_store.create_conversation("kept", "m")
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    settings = win.open_settings()
    switch = settings.encryption
    assert switch is not None
    switch.check.setChecked(True)
    assert not switch.again.isVisible()  # no passphrase yet: the keyring is used
    qtbot.keyClicks(switch.passphrase, "correct horse")
    assert switch.again.isVisible()
    qtbot.keyClicks(switch.again, "correct hrose")
    settings.accept()
    assert settings.isVisible()  # not saved, not switched
    assert switch.mismatch.isVisible() and "differ" in switch.mismatch.text()
    assert cipher.file_state(context.paths.database) == "plaintext"

    qtbot.keyClicks(switch.again, "correct horse")
    settings.accept()
    with qtbot.waitSignal(win.encryption_switch.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [True]
    assert context.at_rest.status()["key_source"] == "passphrase"
    assert win.key_backup is None  # the passphrase is the key: nothing to back up
    win.close()


def test_without_a_keyring_the_window_offers_a_passphrase_in_place(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text: warned.append(text))
    context = build_context(policy=NoPolicy())  # no keyring: a new install stays plaintext
    context.chat_store.create_conversation("kept", "m")
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    settings = win.open_settings()
    assert settings.encryption is not None
    settings.encryption.check.setChecked(True)
    settings.accept()
    progress = win.encryption_switch
    with qtbot.waitSignal(progress.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [False]
    assert warned == []  # no box pointing at a command-line flag
    offer = progress.offer
    assert offer is not None and offer.isVisible()
    assert offer.field.hasFocus() or offer.focusWidget() is offer.field
    assert "keyring" in offer.intro.text()
    assert "--passphrase" not in offer.intro.text()
    assert cipher.file_state(context.paths.database) == "plaintext"

    qtbot.keyClicks(offer.field, "correct horse")
    qtbot.keyClicks(offer.again, "correct hose")
    offer.accept()
    assert offer.isVisible() and "differ" in offer.problem.text()
    qtbot.keyClicks(offer.again, "correct horse")
    offer.accept()
    assert progress.next is not None
    with qtbot.waitSignal(progress.next.finished_with, timeout=30_000) as ended:
        pass
    assert ended.args == [True]
    assert context.at_rest.status()["key_source"] == "passphrase"
    assert [c.title for c in context.chat_store.list_conversations()] == ["kept"]
    win.close()


@pytest.mark.parametrize("existing", [True, False], ids=["plaintext-database", "new-install"])
def test_policy_without_a_keyring_asks_a_passphrase_at_start_instead_of_refusing(
    qtbot, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    from PySide6.QtWidgets import QDialog

    from desktop.policy import MachinePolicy
    from desktop.ui.settings.encryption import encrypt_at_start
    from desktop.ui.settings.new_passphrase import NewPassphraseDialog

    policy = MachinePolicy("test", {"EncryptAtRest": True})
    if existing:
        plain = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
        plain.chat_store.create_conversation("kept", "m")
        plain.close()
        assert plain.data_lock is not None
        plain.data_lock.release()
    asked: list[str] = []

    def typed_twice(dialog: NewPassphraseDialog) -> int:
        asked.append(dialog.intro.text())
        dialog.field.setText("correct horse")
        dialog.again.setText("correct horse")
        dialog.accept()
        return int(dialog.result())

    monkeypatch.setattr(NewPassphraseDialog, "exec", lambda _d: int(QDialog.DialogCode.Rejected))
    cancelled = build_context(policy=policy)
    assert not encrypt_at_start(cancelled)  # the window quits; nothing was changed
    assert cipher.file_state(cancelled.paths.database) == ("plaintext" if existing else "missing")
    cancelled.close()
    assert cancelled.data_lock is not None
    cancelled.data_lock.release()

    monkeypatch.setattr(NewPassphraseDialog, "exec", typed_twice)
    context = build_context(policy=policy)
    assert encrypt_at_start(context)
    assert len(asked) == 1 and "EncryptAtRest" in asked[0] and "--passphrase" not in asked[0]
    assert context.at_rest.status()["key_source"] == "passphrase"
    titles = [c.title for c in context.chat_store.list_conversations()]
    assert titles == (["kept"] if existing else [])
    assert cipher.file_state(context.paths.database) == "encrypted"
    context.close()
    assert context.data_lock is not None
    context.data_lock.release()

    monkeypatch.setattr(NewPassphraseDialog, "exec", lambda _d: int(QDialog.DialogCode.Rejected))
    later = build_context(policy=policy, passphrase="correct horse")
    assert encrypt_at_start(later)  # encrypted now: nothing asked
    assert len(asked) == 1
    later.close()
