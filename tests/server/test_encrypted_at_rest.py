"""Served requests on an encrypted install: no chat word in any file EdgeDesk writes."""

from __future__ import annotations

from pathlib import Path

import openai

from desktop.store import _cipher as cipher
from desktop.store._chat_records import ChatMessage
from tests.server.conftest import serve

WORDS = ("wombatdiagnosis", "acmeclientname", "患者病历")


def test_chats_stored_responses_and_logs_on_disk_carry_no_chat_words(
    tmp_path: Path, tiny_chat: Path, file_keyring: Path
) -> None:
    home = tmp_path / "home"
    prompt = " ".join(WORDS)
    with serve(home, [tiny_chat]) as served:
        with openai.OpenAI(
            base_url=served.url, api_key=served.key, max_retries=0, timeout=60
        ) as client:
            client.chat.completions.create(
                model="tiny-chat", max_tokens=4, messages=[{"role": "user", "content": prompt}]
            )
            stored = client.responses.create(
                model="tiny-chat", input=prompt, max_output_tokens=2, store=True
            )
            assert client.responses.retrieve(stored.id).id == stored.id
            conv = served.ctx.chat_store.create_conversation(prompt, "tiny-chat")
            served.ctx.chat_store.add_message(conv.id, ChatMessage("user", prompt))
            database = served.ctx.paths.database
            assert cipher.file_state(database) == "encrypted"
            files = [p for p in home.rglob("*") if p.is_file()]
            assert any(p.name == "access.log" for p in files)
            leaks = {
                str(p.relative_to(home)): w
                for p in files
                for w in WORDS
                if w.encode() in p.read_bytes()
            }
            assert leaks == {}  # open, WAL included: no file says a word of the chat
    files = [p for p in home.rglob("*") if p.is_file()]
    assert {
        str(p.relative_to(home)): w for p in files for w in WORDS if w.encode() in p.read_bytes()
    } == {}
