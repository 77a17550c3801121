"""The recovery code: the database key written down, typed back, checked; offered once per key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest
from desktop.store import _recovery_code as recovery_code
from desktop.store._atrest import AtRest, KeyMissing, ring_delete
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from desktop.store._cipher import KeyRejected

WORD = "zanzibarquokka"


@pytest.fixture
def db_path() -> Path:
    path = Paths.from_env().database
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _chats(db_path: Path, at_rest: AtRest, n: int = 3) -> list[str]:
    store = ChatStore(db_path, key=at_rest.key())
    for i in range(n):
        conv = store.create_conversation(f"chat {i}", "m")
        store.add_message(conv.id, ChatMessage("user", f"{WORD} {i}"))
    titles = [c.title for c in store.list_conversations()]
    store.close()
    return titles


def test_a_recovery_code_brings_back_a_lost_key_with_every_chat(
    db_path: Path, file_keyring: Path
) -> None:
    at_rest = AtRest(db_path)
    at_rest.open_key(required=False, new_default=True)
    titles = _chats(db_path, at_rest)
    code = at_rest.recovery_code()
    groups = code.split("-")
    assert len(groups) == 14 and all(len(g) == 4 for g in groups)
    ring_delete(json.loads(at_rest.info_path.read_text())["key_id"])  # a reset keyring
    with pytest.raises(KeyMissing):
        AtRest(db_path).key()

    # Typed back by hand: lower case, spaces for dashes, a zero for an O.
    typed = code.lower().replace("-", " ").replace("o", "0")
    AtRest(db_path).import_key(typed)
    store = ChatStore(db_path, key=AtRest(db_path).key())
    assert [c.title for c in store.list_conversations()] == titles
    assert store.search(WORD)
    store.close()


def test_a_mistyped_or_foreign_code_is_refused_and_changes_nothing(
    db_path: Path, file_keyring: Path
) -> None:
    at_rest = AtRest(db_path)
    at_rest.open_key(required=False, new_default=True)
    _chats(db_path, at_rest, 1)
    code = at_rest.recovery_code()
    info = at_rest.info_path.read_text()
    swapped = ("B" if code[0] != "B" else "C") + code[1:]
    with pytest.raises(InvalidRequest, match="typo"):
        at_rest.import_key(swapped)
    with pytest.raises(InvalidRequest, match="groups of 4"):
        at_rest.import_key(code[:-5])
    other = recovery_code.encode("cd" * 32)  # well formed, but another database's key
    with pytest.raises(KeyRejected):
        at_rest.import_key(other)
    assert at_rest.info_path.read_text() == info


def test_the_backup_is_offered_once_per_key_and_not_for_a_passphrase(
    db_path: Path, file_keyring: Path
) -> None:
    at_rest = AtRest(db_path)
    at_rest.open_key(required=False, new_default=True)  # a new install, silently encrypted
    _chats(db_path, at_rest, 1)
    assert at_rest.backup_due()
    at_rest.backup_offered()
    assert not AtRest(db_path).backup_due()  # remembered beside the database
    at_rest.decrypt()
    assert not at_rest.backup_due()
    at_rest.encrypt()  # a new key: the old backup does not open it, so offered again
    assert at_rest.backup_due()
    at_rest.decrypt()
    at_rest.encrypt(passphrase="correct horse")  # the passphrase is the key: nothing to offer
    assert not at_rest.backup_due()
