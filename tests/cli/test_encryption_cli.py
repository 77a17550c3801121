"""``edgedesk data encrypt|decrypt|export-key|import-key``, ``unlock`` and ``doctor``'s line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.base.errors import ConfigError
from desktop.policy import MachinePolicy
from desktop.root.context import AppContext, build_context
from desktop.store import _cipher as cipher
from desktop.store._atrest import AtRest
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore

ROOT = Path(__file__).resolve().parents[2]
SECRET = "quokkaconfidential"


def _edgedesk(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        input=stdin,
        env={**os.environ, **(env or {})},
    )


def _plaintext_chats(n: int = 2) -> Path:
    database = Paths.from_env().database
    database.parent.mkdir(parents=True, exist_ok=True)
    store = ChatStore(database)
    for i in range(n):
        conv = store.create_conversation(f"chat {i}", "m")
        store.add_message(conv.id, ChatMessage("user", f"{SECRET} number {i}"))
    store.close()
    return database


def _listed() -> subprocess.CompletedProcess[str]:
    return _edgedesk("chats", "list")


def test_encrypt_lose_the_key_recover_it_and_decrypt(file_keyring: Path, tmp_path: Path) -> None:
    database = _plaintext_chats()
    done = _edgedesk("data", "encrypt")
    assert done.returncode == 0, done.stderr
    assert "encrypted:" in done.stdout and "export-key" in done.stdout
    assert cipher.file_state(database) == "encrypted"
    assert SECRET.encode() not in database.read_bytes()
    listed = _listed()
    assert listed.returncode == 0 and "chat 1" in listed.stdout, listed.stderr

    doctor = _edgedesk("doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    data = json.loads(doctor.stdout)["data"]
    assert (data["encrypted"], data["key_source"]) == (True, "OS keyring")
    assert "SQLCipher 4" in data["cipher"]
    assert "encrypted: yes, SQLCipher 4" in _edgedesk("doctor").stdout

    saved = tmp_path / "edgedesk.key"
    assert _edgedesk("data", "export-key", str(saved)).returncode == 0
    assert saved.stat().st_mode & 0o077 == 0  # the key file is the owner's alone
    digest = hashlib.sha256(database.read_bytes()).hexdigest()
    file_keyring.write_text("{}")  # a new OS profile: the keyring has no key

    lost = _listed()
    assert lost.returncode == 11
    assert lost.stderr.count("\n") == 1 and "Traceback" not in lost.stderr
    assert "edgedesk data import-key FILE" in lost.stderr and "start fresh" in lost.stderr
    assert hashlib.sha256(database.read_bytes()).hexdigest() == digest  # left untouched

    wrong = tmp_path / "wrong.key"
    wrong.write_text(saved.read_text().rsplit(" ", 1)[0] + " " + "ab" * 32 + "\n")
    rejected = _edgedesk("data", "import-key", str(wrong))
    assert rejected.returncode == 11 and "does not open" in rejected.stderr
    restored = _edgedesk("data", "import-key", str(saved))
    assert restored.returncode == 0, restored.stderr
    assert "chat 1" in _listed().stdout

    back = _edgedesk("data", "decrypt")
    assert back.returncode == 0, back.stderr
    assert cipher.file_state(database) == "plaintext"
    assert "chat 1" in _listed().stdout
    assert "encrypted: no" in _edgedesk("doctor").stdout


def test_encrypting_an_encrypted_database_says_so_and_succeeds(file_keyring: Path) -> None:
    # IT scripts make sure encryption is on by running `data encrypt` every time.
    database = _plaintext_chats()
    assert _edgedesk("data", "encrypt").returncode == 0
    digest = hashlib.sha256(database.read_bytes()).hexdigest()
    again = _edgedesk("data", "encrypt")
    assert again.returncode == 0, again.stderr
    assert "already encrypted" in again.stdout and "OS keyring" in again.stdout
    assert hashlib.sha256(database.read_bytes()).hexdigest() == digest  # left untouched
    with_passphrase = _edgedesk("data", "encrypt", "--passphrase-stdin", stdin="other\n")
    assert with_passphrase.returncode == 0 and "already encrypted" in with_passphrase.stdout


def test_a_passphrase_database_opens_with_unlock_or_the_environment() -> None:
    _plaintext_chats()
    done = _edgedesk("data", "encrypt", "--passphrase-stdin", stdin="sesame open\n")
    assert done.returncode == 0, done.stderr
    locked = _listed()
    assert locked.returncode == 11 and "edgedesk unlock" in locked.stderr
    unlocked = _edgedesk("unlock", "--passphrase-stdin", "chats", "list", stdin="sesame open\n")
    assert unlocked.returncode == 0 and "chat 1" in unlocked.stdout, unlocked.stderr
    wrong = _edgedesk("unlock", "--passphrase-stdin", "chats", "list", stdin="nope\n")
    assert wrong.returncode == 11 and "Traceback" not in wrong.stderr
    by_env = _edgedesk("chats", "list", env={"EDGEDESK_PASSPHRASE": "sesame open"})
    assert by_env.returncode == 0 and "chat 1" in by_env.stdout


def test_a_new_install_is_encrypted_where_a_keyring_works(
    file_keyring: Path, context: AppContext
) -> None:
    conv = context.chat_store.create_conversation("first", "m")
    context.chat_store.add_message(conv.id, ChatMessage("user", SECRET))
    assert context.documents_db.encrypted
    context.close()
    assert cipher.file_state(context.paths.database) == "encrypted"


def test_policy_encrypt_at_rest_encrypts_at_start_or_refuses_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = _plaintext_chats()
    policy = MachinePolicy("test", {"EncryptAtRest": True})
    ctx = build_context(policy=policy)
    with pytest.raises(ConfigError, match="EncryptAtRest.*keyring"):
        ctx.chat_store  # noqa: B018 - no keyring here: refused, file unchanged
    assert cipher.file_state(database) == "plaintext"
    ctx.close()
    refused = _edgedesk("data", "decrypt")  # not encrypted: nothing to do, said so
    assert refused.returncode == 2

    import keyring

    from tests.fixtures.file_keyring import ENV, FileKeyring

    monkeypatch.setenv(ENV, str(tmp_path / "ring.json"))
    keyring.set_keyring(FileKeyring())
    ctx = build_context(policy=policy)
    assert [c.title for c in ctx.chat_store.list_conversations()] == ["chat 1", "chat 0"]
    ctx.close()
    assert cipher.file_state(database) == "encrypted"


CODE = re.compile(r"recovery code: ((?:[A-Z2-7]{4}-){13}[A-Z2-7]{4})")


def test_a_recovery_code_printed_by_export_key_brings_back_every_chat(
    file_keyring: Path,
) -> None:
    _plaintext_chats(3)
    assert _edgedesk("data", "encrypt").returncode == 0
    # A script is not asked: it gets the hint, with the code route too.
    exported = _edgedesk("data", "export-key", "--code")
    assert exported.returncode == 0, exported.stderr
    found = CODE.search(exported.stdout)
    assert found is not None, exported.stdout
    assert "import-key --code" in exported.stderr
    neither = _edgedesk("data", "export-key")
    assert neither.returncode == 2 and "--code" in neither.stderr
    file_keyring.write_text("{}")  # the keyring entry is lost
    assert _listed().returncode == 11

    typo = found.group(1).replace(found.group(1)[5], "A" if found.group(1)[5] != "A" else "B", 1)
    refused = _edgedesk("data", "import-key", "--code", stdin=typo + "\n")
    assert refused.returncode == 2 and "typo" in refused.stderr
    restored = _edgedesk("data", "import-key", "--code", stdin=found.group(1) + "\n")
    assert restored.returncode == 0, restored.stderr
    listed = _listed()
    assert listed.returncode == 0, listed.stderr
    assert all(f"chat {i}" in listed.stdout for i in range(3))


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal")
def test_encrypt_at_a_terminal_offers_the_backup_once_and_the_code_recovers(
    file_keyring: Path,
) -> None:
    from tests.cli.terminal import at_terminal

    database = _plaintext_chats(2)
    code, shown = at_terminal(["data", "encrypt"], [("Back up the key now?", "c")], timeout_s=120)
    assert code == 0, shown
    found = CODE.search(shown)
    assert found is not None, shown
    # Offered: remembered beside the database, so neither the window nor a later
    # command asks again for this key.
    assert not AtRest(database).backup_due()

    file_keyring.write_text("{}")
    restored = _edgedesk("data", "import-key", "--code", stdin=found.group(1) + "\n")
    assert restored.returncode == 0, restored.stderr
    assert "chat 1" in _listed().stdout


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal")
def test_a_new_passphrase_is_asked_twice_and_no_keyring_names_the_cli_route() -> None:
    from tests.cli.terminal import at_terminal

    database = _plaintext_chats(1)
    no_ring = _edgedesk("data", "encrypt")
    assert no_ring.returncode == 2
    assert "edgedesk data encrypt --passphrase' (asked twice)" in no_ring.stderr
    assert "--passphrase-stdin" in no_ring.stderr
    assert cipher.file_state(database) == "plaintext"

    code, shown = at_terminal(
        ["data", "encrypt", "--passphrase"],
        [("New database passphrase: ", "sesame open"), ("Again: ", "sesame opne")],
    )
    assert code == 2 and "the two passphrases differ" in shown, shown
    assert cipher.file_state(database) == "plaintext"
    code, shown = at_terminal(
        ["data", "encrypt", "--passphrase"],
        [("New database passphrase: ", "sesame open"), ("Again: ", "sesame open")],
    )
    assert code == 0, shown
    assert "Back up the key" not in shown  # the passphrase is the key: nothing to offer
    assert _edgedesk("chats", "list", env={"EDGEDESK_PASSPHRASE": "sesame open"}).returncode == 0


def test_a_silently_encrypted_first_command_says_once_how_to_back_up_the_key(
    file_keyring: Path,
) -> None:
    first = _listed()  # a new install: the first command creates the key
    assert first.returncode == 0, first.stderr
    assert "OS keyring" in first.stderr and "edgedesk data export-key --code" in first.stderr
    assert cipher.file_state(Paths.from_env().database) == "encrypted"
    again = _listed()
    assert again.returncode == 0 and "export-key" not in again.stderr
