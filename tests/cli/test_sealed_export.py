"""``edgedesk chats export --encrypt``: a file only the passphrase opens, imported back whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.base.errors import InvalidRequest
from desktop.root.context import build_context
from desktop.store import _sealed as sealed
from desktop.store._chat_records import ChatMessage
from tests.robustness.cli import assert_clean, edgedesk

WORDS = ("zanzibarquokka", "pterodactylsecret", "机密病历", "clientnamehere")


def _saved_chat() -> None:
    ctx = build_context(environ=dict(os.environ), policy=NoPolicy())
    conv = ctx.chat_store.create_conversation(f"about {WORDS[3]}", "m")
    ctx.chat_store.add_message(conv.id, ChatMessage("user", f"{WORDS[0]} {WORDS[2]}"))
    ctx.chat_store.add_message(conv.id, ChatMessage("assistant", WORDS[1]))
    ctx.close()
    assert ctx.data_lock is not None
    ctx.data_lock.release()


def test_an_encrypted_export_holds_no_word_and_imports_back_with_the_passphrase(
    tmp_path: Path,
) -> None:
    _saved_chat()
    out = tmp_path / "chats.edgedesk-sealed"
    written = edgedesk(
        "chats",
        "export",
        "--format",
        "json",
        "--encrypt",
        "--passphrase-stdin",
        "-o",
        out,
        stdin="correct horse\n",
    )
    assert_clean(written, failed=False)
    data = out.read_bytes()
    assert data.startswith(sealed.MAGIC)
    for word in (*WORDS, "about", "assistant", "messages"):
        assert word.encode() not in data, word

    elsewhere = tmp_path / "other-home"
    wrong = edgedesk(
        "chats", "import", "--passphrase-stdin", out, home=elsewhere, stdin="wrong horse\n"
    )
    assert_clean(wrong, failed=True)
    assert "passphrase does not open" in wrong.stderr
    right = edgedesk(
        "chats", "import", "--passphrase-stdin", out, home=elsewhere, stdin="correct horse\n"
    )
    assert_clean(right, failed=False)
    listing = edgedesk("chats", "export", "--format", "json", home=elsewhere)
    chats = json.loads(listing.stdout)["conversations"]
    assert [c["title"] for c in chats] == [f"about {WORDS[3]}"]
    assert [m["content"] for m in chats[0]["messages"]] == [f"{WORDS[0]} {WORDS[2]}", WORDS[1]]


def test_a_changed_byte_or_a_newer_format_is_refused_never_misread() -> None:
    blob = sealed.seal(b"secret words", "pw")
    assert sealed.unseal(blob, "pw") == b"secret words"
    assert sealed.seal(b"x", "pw") != sealed.seal(b"x", "pw")  # a new salt and nonce each
    for at in (len(sealed.MAGIC) + 5, len(blob) - 1, len(blob) // 2 + 30):
        changed = bytearray(blob)
        changed[at] ^= 1
        with pytest.raises(InvalidRequest, match="passphrase does not open"):
            sealed.unseal(bytes(changed), "pw")
    newer = bytearray(blob)
    newer[len(sealed.MAGIC) - 1] = 2
    with pytest.raises(InvalidRequest, match="newer EdgeDesk"):
        sealed.unseal(bytes(newer), "pw")
    with pytest.raises(InvalidRequest, match="cut short"):
        sealed.unseal(blob[:40], "pw")
    with pytest.raises(InvalidRequest, match="empty"):
        sealed.seal(b"x", "")
