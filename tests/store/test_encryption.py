"""Encryption at rest on real SQLCipher files: no chat word on disk, nothing lost switching."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest, StoreError
from desktop.store import _cipher as cipher
from desktop.store._atrest import EXIT_KEY, AtRest, KeyMissing, ring_delete
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from desktop.store._cipher import DatabaseKey, KeyRejected

ROOT = Path(__file__).resolve().parents[2]
WORDS = ("zanzibarquokka", "pterodactylsecret", "机密病历", "源代码")


@pytest.fixture
def db_path() -> Path:
    path = Paths.from_env().database
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _on_disk(path: Path) -> bytes:
    """The database file and every SQLite file beside it, as bytes."""
    return b"".join(p.read_bytes() for p in [path, *cipher.sidecars(path)] if p.exists())


def _fill(store: ChatStore, n: int = 3) -> list[int]:
    ids = []
    for i in range(n):
        conv = store.create_conversation(f"chat {i}", "m")
        ids.append(conv.id)
        store.add_message(conv.id, ChatMessage("user", f"{WORDS[0]} {WORDS[2]} turn {i}"))
        store.add_message(conv.id, ChatMessage("assistant", f"{WORDS[1]} {WORDS[3]} {i}"))
    return ids


def _words_in(data: bytes) -> list[str]:
    return [w for w in WORDS if w.encode() in data]


def test_a_new_encrypted_database_holds_no_chat_word_and_finds_them_after_restart(
    db_path: Path, file_keyring: Path
) -> None:
    key = AtRest(db_path).open_key(required=False, new_default=True)
    assert key is not None and key.source == "OS keyring"
    store = ChatStore(db_path, key=key)
    _fill(store)
    # Open, with the WAL holding the latest turns: neither file may show a word.
    assert Path(f"{db_path}-wal").exists()
    assert _words_in(_on_disk(db_path)) == []
    store.close()
    assert _words_in(_on_disk(db_path)) == []
    assert key.secret.encode() not in b"".join(
        p.read_bytes() for p in db_path.parent.iterdir() if p.is_file()
    )

    again = ChatStore(db_path, key=AtRest(db_path).key())
    assert len(again.list_conversations()) == 3
    assert {h.role for h in again.search(WORDS[2])} == {"user"}
    assert len(again.search("病历")) == 3  # a two-character Chinese word inside a run
    assert len(again.search(WORDS[1])) == 3
    again.close()


def test_without_a_keyring_a_new_install_stays_plaintext(db_path: Path) -> None:
    assert AtRest(db_path).open_key(required=False, new_default=True) is None
    store = ChatStore(db_path)
    _fill(store, 1)
    store.close()
    assert cipher.file_state(db_path) == "plaintext"


def test_encrypt_then_decrypt_in_place_keeps_every_message_and_the_search_order(
    db_path: Path, file_keyring: Path
) -> None:
    store = ChatStore(db_path)
    _fill(store, 5)
    before = [(h.conversation_id, h.message_id) for h in store.search(WORDS[0])]
    messages = {c.id: store.get_messages(c.id) for c in store.list_conversations()}
    store.close()
    assert _words_in(_on_disk(db_path)) != []

    at_rest = AtRest(db_path)
    key = at_rest.encrypt()
    assert at_rest.state() == "encrypted" and not at_rest.marker_path.exists()
    assert _words_in(_on_disk(db_path)) == []
    assert not Path(f"{db_path}.new").exists()
    store = ChatStore(db_path, key=key)
    assert [(h.conversation_id, h.message_id) for h in store.search(WORDS[0])] == before
    assert {c.id: store.get_messages(c.id) for c in store.list_conversations()} == messages
    store.close()

    at_rest.decrypt()
    assert at_rest.state() == "plaintext" and not at_rest.info_path.exists()
    assert json.loads(file_keyring.read_text()) == {}  # the key is forgotten too
    store = ChatStore(db_path)
    assert {c.id: store.get_messages(c.id) for c in store.list_conversations()} == messages
    store.close()


def test_a_key_missing_from_the_keyring_says_how_to_recover_and_changes_nothing(
    db_path: Path, file_keyring: Path, tmp_path: Path
) -> None:
    at_rest = AtRest(db_path)
    key = at_rest.open_key(required=False, new_default=True)
    store = ChatStore(db_path, key=key)
    _fill(store, 2)
    store.close()
    exported = at_rest.export_key()
    digest = hashlib.sha256(db_path.read_bytes()).hexdigest()
    info = json.loads(at_rest.info_path.read_text())
    ring_delete(info["key_id"])  # a new OS profile, a reset keyring

    with pytest.raises(KeyMissing) as missing:
        AtRest(db_path).open_key(required=False, new_default=True)
    assert missing.value.exit_code == EXIT_KEY == 11
    for hint in (
        "edgedesk data import-key",
        "edgedesk data export-key",
        "start fresh",
        "Nothing was changed",
    ):
        assert hint in missing.value.message
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == digest  # no new empty DB

    with pytest.raises(KeyRejected):  # the wrong key: refused, nothing changed
        ChatStore(db_path, key=DatabaseKey("ab" * 32))
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == digest
    with pytest.raises(InvalidRequest):
        AtRest(db_path).import_key("not a key")

    AtRest(db_path).import_key(exported)
    store = ChatStore(db_path, key=AtRest(db_path).key())
    assert len(store.list_conversations()) == 2
    store.close()

    at_rest.info_path.unlink()  # the key file lost too: still recoverable, still untouched
    with pytest.raises(StoreError, match="edgedesk data import-key") as no_file:
        AtRest(db_path).key()
    assert no_file.value.exit_code == 9
    AtRest(db_path).import_key(exported)
    ChatStore(db_path, key=AtRest(db_path).key()).close()
    assert cipher.file_state(db_path) == "encrypted"


def test_a_passphrase_opens_it_without_a_keyring(db_path: Path) -> None:
    at_rest = AtRest(db_path, environ={})
    key = at_rest.encrypt(passphrase="correct horse battery staple")
    ChatStore(db_path, key=key).close()
    with pytest.raises(KeyMissing, match="edgedesk unlock"):
        AtRest(db_path, environ={}).key()
    wrong = AtRest(db_path, environ={"EDGEDESK_PASSPHRASE": "wrong"}).key()
    with pytest.raises(KeyRejected):
        ChatStore(db_path, key=wrong)
    right = AtRest(db_path, environ={"EDGEDESK_PASSPHRASE": "correct horse battery staple"})
    assert right.status()["key_source"] == "passphrase"
    ChatStore(db_path, key=right.key()).close()


def test_policy_refuses_a_plaintext_database_it_cannot_encrypt_and_says_why(db_path: Path) -> None:
    ChatStore(db_path).close()
    digest = hashlib.sha256(db_path.read_bytes()).hexdigest()
    with pytest.raises(Exception, match="EncryptAtRest.*keyring") as refused:
        AtRest(db_path).open_key(required=True, new_default=True)
    assert refused.value.exit_code == 2  # type: ignore[attr-defined]
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == digest


def test_policy_uses_the_passphrase_given_where_no_keyring_works(db_path: Path) -> None:
    ChatStore(db_path).close()
    env = {"EDGEDESK_PASSPHRASE": "server secret"}
    key = AtRest(db_path, environ=env).open_key(required=True, new_default=True)
    assert key is not None and key.passphrase and cipher.file_state(db_path) == "encrypted"
    assert AtRest(db_path, environ=env).status()["key_source"] == "passphrase"


def test_policy_encrypts_a_plaintext_database_at_start(db_path: Path, file_keyring: Path) -> None:
    store = ChatStore(db_path)
    _fill(store, 2)
    store.close()
    key = AtRest(db_path).open_key(required=True, new_default=False)
    assert key is not None and cipher.file_state(db_path) == "encrypted"
    store = ChatStore(db_path, key=key)
    assert len(store.list_conversations()) == 2
    store.close()


KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from desktop.store._atrest import AtRest

    def step(name):
        if name == sys.argv[3]:
            os.kill(os.getpid(), signal.SIGKILL)

    at_rest = AtRest(Path(sys.argv[1]))
    if sys.argv[2] == "encrypt":
        at_rest.encrypt(step=step)
    else:
        at_rest.decrypt(step=step)
""")


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
@pytest.mark.parametrize("point", ["planned", "exported", "verified", "renamed"])
def test_kill_9_while_switching_loses_nothing_and_the_next_run_finishes(
    db_path: Path, file_keyring: Path, direction: str, point: str
) -> None:
    key = AtRest(db_path).encrypt() if direction == "decrypt" else None
    store = ChatStore(db_path, key=key)
    _fill(store, 4)
    messages = {c.id: store.get_messages(c.id) for c in store.list_conversations()}
    store.close()

    run = subprocess.run(
        [sys.executable, "-c", KILLER, str(db_path), direction, point],
        cwd=ROOT,
        env=os.environ,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    # Killed: the database is one whole file, old or new, that opens with what is there.
    at_rest = AtRest(db_path)
    assert at_rest.marker_path.exists()
    target, old = (
        ("encrypted", "plaintext") if direction == "encrypt" else ("plaintext", "encrypted")
    )
    assert at_rest.state() == (target if point == "renamed" else old)

    assert at_rest.resume() is True  # what every start does
    assert at_rest.state() == target and not at_rest.marker_path.exists()
    assert not Path(f"{db_path}.new").exists()
    store = ChatStore(db_path, key=at_rest.key())
    assert {c.id: store.get_messages(c.id) for c in store.list_conversations()} == messages
    store.close()
    if target == "encrypted":
        assert _words_in(_on_disk(db_path)) == []


def test_keys_derived_for_the_prompt_cache_follow_the_database_key(db_path: Path) -> None:
    raw = DatabaseKey("ab" * 32)
    one = cipher.derived_key(raw, db_path, "prompt cache")
    assert len(one) == 32 and one == cipher.derived_key(raw, db_path, "prompt cache")
    assert one != cipher.derived_key(raw, db_path, "something else")
    assert one != cipher.derived_key(DatabaseKey("cd" * 32), db_path, "prompt cache")
    assert bytes.fromhex("ab" * 32) != one  # never the database key itself

    # A passphrase goes through SQLCipher's own derivation, salted by the file.
    phrase = DatabaseKey("correct horse", passphrase=True, source="passphrase")
    with pytest.raises(StoreError):
        cipher.derived_key(phrase, db_path, "prompt cache")  # no database yet: no salt
    ChatStore(db_path, key=phrase).close()
    first = cipher.derived_key(phrase, db_path, "prompt cache")
    assert first == cipher.derived_key(phrase, db_path, "prompt cache")
    other = db_path.with_name("other.db")
    ChatStore(other, key=phrase).close()
    assert cipher.derived_key(phrase, other, "prompt cache") != first  # another salt
