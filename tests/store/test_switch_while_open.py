"""The window's encryption switch: the database is rewritten while the app holds it open."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.base.errors import ConfigError
from desktop.policy import MachinePolicy
from desktop.root.context import build_context
from desktop.store import _cipher as cipher
from desktop.store._chat_records import ChatMessage

SECRET = "zanzibarquokkasecret"


def _on_disk(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in [path, *cipher.sidecars(path)] if p.exists())


def test_switching_on_and_off_while_open_keeps_every_message_and_the_same_stores(
    file_keyring: Path,
) -> None:
    ctx = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    store = ctx.chat_store
    conv = store.create_conversation("private", "m")
    store.add_message(conv.id, ChatMessage("user", f"{SECRET} 病历"))
    docs = ctx.documents_db
    assert cipher.file_state(ctx.paths.database) == "plaintext"
    steps: list[str] = []

    ctx.switch_encryption(True, step=steps.append)

    assert "verified" in steps and steps[-1] == "done"
    assert cipher.file_state(ctx.paths.database) == "encrypted"
    assert SECRET.encode() not in _on_disk(ctx.paths.database)
    # The same objects the window's views hold go on working, now on the encrypted file.
    assert [h.conversation_id for h in store.search(SECRET)] == [conv.id]
    store.add_message(conv.id, ChatMessage("assistant", "still here"))
    assert docs.encrypted and docs.query("SELECT count(*) FROM messages")[0][0] == 2
    assert SECRET.encode() not in _on_disk(ctx.paths.database)

    ctx.switch_encryption(False)
    assert cipher.file_state(ctx.paths.database) == "plaintext"
    assert [m.content for m in store.get_messages(conv.id)] == [f"{SECRET} 病历", "still here"]
    assert not docs.encrypted
    ctx.close()


def test_a_passphrase_switch_and_a_policy_that_forbids_turning_it_off(tmp_path: Path) -> None:
    ctx = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    store = ctx.chat_store
    conv = store.create_conversation("c", "m")
    store.add_message(conv.id, ChatMessage("user", SECRET))
    ctx.switch_encryption(True, passphrase="correct horse")
    assert ctx.at_rest.status()["key_source"] == "passphrase"
    assert len(store.search(SECRET)) == 1
    ctx.close()

    forced = build_context(
        policy=MachinePolicy("test", {"EncryptAtRest": True}), passphrase="correct horse"
    )
    assert len(forced.chat_store.search(SECRET)) == 1
    with pytest.raises(ConfigError, match="EncryptAtRest"):
        forced.switch_encryption(False)
    assert cipher.file_state(forced.paths.database) == "encrypted"
    assert len(forced.chat_store.search(SECRET)) == 1  # open again after the refusal
    forced.close()


def test_unlock_checks_the_passphrase_before_the_database_opens(tmp_path: Path) -> None:
    from desktop.store._cipher import KeyRejected

    ctx = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    ctx.chat_store.create_conversation("c", "m")
    ctx.switch_encryption(True, passphrase="correct horse")
    ctx.close()
    later = build_context(policy=NoPolicy())
    assert later.at_rest.needs_passphrase()
    with pytest.raises(KeyRejected):
        later.unlock("wrong horse")
    assert later.at_rest.needs_passphrase()
    later.unlock("correct horse")
    assert not later.at_rest.needs_passphrase()
    assert [c.title for c in later.chat_store.list_conversations()] == ["c"]
    later.close()
