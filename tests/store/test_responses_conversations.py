"""Kept API responses are conversations of the one store, hidden from the window and CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import NoPolicy, Paths
from desktop.base.errors import InvalidRequest
from desktop.cli import main
from desktop.root.context import build_context
from desktop.store import _cipher as cipher
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from desktop.store._db import Database, applied_migrations, migrate
from desktop.store._migrations import MIGRATIONS
from desktop.store._responses import ResponseStore

WORD = "quokkaparliament"
PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8"
ITEMS: list[dict[str, Any]] = [
    {"type": "message", "role": "developer", "content": "Be brief."},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": f"What does the {WORD} say? Look at this"},
            {"type": "input_image", "image_url": PIXEL, "detail": "auto"},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "The user wants the weather."}],
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"unit": "celsius"}',
        "status": "completed",
    },
    {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "21 °C, 晴"},
            {"type": "input_image", "image_url": PIXEL},
        ],
    },
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": f"Sunny, says the {WORD}.", "annotations": []}],
    },
]
RESPONSE: dict[str, Any] = {
    "id": "resp_old",
    "object": "response",
    "model": "tiny-chat",
    "output": ITEMS[-1:],
}


def _old_database(path: Path, rows: list[tuple[str, str, float, list[dict[str, Any]]]]) -> None:
    """A database at schema 13 (before migration 14) holding ``api_responses`` rows."""
    old = Database(path)
    migrate(old, MIGRATIONS[:13])
    old.execute(
        "INSERT INTO conversations(title, model, tags, created, updated) "
        "VALUES ('A window chat', 'glm', '[]', 100.0, 200.0)"
    )
    for response_id, owner, created, items in rows:
        old.execute(
            "INSERT INTO api_responses(id, owner, model, created, response, items) "
            "VALUES (?, ?, 'tiny-chat', ?, ?, ?)",
            (
                response_id,
                owner,
                created,
                json.dumps({**RESPONSE, "id": response_id}, ensure_ascii=False),
                json.dumps(items, ensure_ascii=False),
            ),
        )
    old.close()


def test_migration_14_moves_every_old_response_into_hidden_conversations() -> None:
    path = Paths.from_env().database
    _old_database(
        path,
        [("resp_old", "codex", 1_000.0, ITEMS), ("resp_other", "", 2_000.0, ITEMS[:2])],
    )

    chats = ChatStore(path)
    kept = ResponseStore.over(chats)
    found = kept.get("resp_old", owner="codex")
    assert found is not None
    # Every item comes back as it was kept: calls, their outputs, reasoning, pictures.
    assert found.items == ITEMS and found.response == RESPONSE
    assert (found.model, found.created) == ("tiny-chat", 1_000.0)
    assert kept.get("resp_old") is None  # still only its owner's
    other = kept.get("resp_other")
    assert other is not None and other.items == ITEMS[:2]
    assert kept.count() == 2
    # The window sees its one chat, as before the upgrade.
    assert [c.title for c in chats.list_conversations()] == ["A window chat"]
    assert chats.search(WORD) == [] and chats.list_conversations(search=WORD) == []

    database = chats.database
    assert database is not None
    assert not database.query("SELECT 1 FROM sqlite_master WHERE name = 'api_responses'")
    assert [v for v, _ in applied_migrations(database)] == [m.version for m in MIGRATIONS]
    rows = database.query(
        "SELECT m.role, m.content FROM messages m JOIN conversations c "
        "ON c.id = m.conversation_id WHERE c.response_id = 'resp_old' ORDER BY m.id"
    )
    assert [r[0] for r in rows] == [
        "developer",
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
    ]
    assert WORD in rows[1][1] and "get_weather" in rows[3][1] and "晴" in rows[4][1]
    [(title,)] = database.query("SELECT title FROM conversations WHERE response_id = 'resp_old'")
    assert title == f"What does the {WORD} say? Look at this"
    assert kept.delete("resp_old", owner="codex")
    assert kept.get("resp_other") is not None  # deleting one leaves the other whole
    chats.close()


def _hidden(tmp_path: Path) -> tuple[ChatStore, ResponseStore, int]:
    chats = ChatStore(tmp_path / "db.sqlite")
    kept = ResponseStore.over(chats)
    kept.put("resp_1", "tiny-chat", RESPONSE, ITEMS, owner="codex")
    assert chats.database is not None
    [(conv_id,)] = chats.database.query("SELECT id FROM conversations WHERE response_id = 'resp_1'")
    return chats, kept, int(conv_id)


def test_a_kept_response_is_no_window_conversation_and_cannot_be_reached_by_its_id(
    tmp_path: Path,
) -> None:
    chats, kept, hidden = _hidden(tmp_path)
    mine = chats.create_conversation("mine", "glm")
    chats.add_message(mine.id, ChatMessage("user", "hello"))

    assert [c.id for c in chats.list_conversations()] == [mine.id]
    assert chats.search(WORD) == [] and chats.list_conversations(search=WORD) == []
    assert WORD not in chats.export_json() and WORD not in chats.export_markdown()
    assert chats.export_files() == {}
    # Guessing the hidden conversation's id opens, changes and deletes nothing.
    with pytest.raises(InvalidRequest):
        chats.get_conversation(hidden)
    assert chats.get_messages(hidden) == []
    for change in (
        lambda: chats.rename(hidden, "x"),
        lambda: chats.set_tags(hidden, ["x"]),
        lambda: chats.set_think(hidden, False),
        lambda: chats.add_message(hidden, ChatMessage("user", "x")),
        lambda: chats.delete_many([hidden]),
        lambda: chats.export_json([hidden]),
    ):
        with pytest.raises(InvalidRequest):
            change()
    assert not chats.delete(hidden)
    assert chats.delete_all() == 1  # the window's one chat
    found = kept.get("resp_1", owner="codex")
    assert found is not None and found.items == ITEMS
    assert kept.count() == 1
    chats.close()


def test_one_connection_closed_with_the_chat_store(tmp_path: Path) -> None:
    chats, kept, _ = _hidden(tmp_path)
    assert kept.database is chats.database
    kept.close()  # the chat store's connection: not closed by the response store
    assert kept.get("resp_1", owner="codex") is not None
    chats.close()
    with pytest.raises(Exception, match="closed"):
        kept.get("resp_1", owner="codex")


def _write_long_ago(path: Path) -> None:
    """An old chat and an old kept response, written 'at epoch 0' by another connection."""
    long_ago = ChatStore(path, clock=lambda: 0.0)
    long_ago.create_conversation("old chat", "glm")
    ResponseStore.over(long_ago, clock=lambda: 0.0).put("resp_old", "m", RESPONSE, ITEMS)
    long_ago.close()


def test_one_retention_period_deletes_old_chats_and_old_responses() -> None:
    ctx = build_context(cli_settings={"retention_days": 30})
    ctx.chat_store.create_conversation("new chat", "glm")
    ctx.response_store.put("resp_new", "m", RESPONSE, ITEMS)
    _write_long_ago(ctx.paths.database)

    report = ctx.maintenance()  # the hourly pass
    assert (report.conversations_deleted, report.responses_deleted) == (1, 1)
    assert [c.title for c in ctx.chat_store.list_conversations()] == ["new chat"]
    assert ctx.response_store.get("resp_old") is None
    assert ctx.response_store.get("resp_new") is not None
    _write_long_ago(ctx.paths.database)
    ctx.close()

    ctx = build_context(cli_settings={"retention_days": 30})  # at the next start
    assert [c.title for c in ctx.chat_store.list_conversations()] == ["new chat"]
    assert ctx.response_store.get("resp_old") is None and ctx.response_store.count() == 1
    ctx.close()


def test_chats_rm_all_counts_chats_and_responses_apart(capsys: pytest.CaptureFixture[str]) -> None:
    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("audit_log = true\n", encoding="utf-8")
    ctx = build_context()
    ctx.chat_store.create_conversation("a chat", "glm")
    ctx.response_store.put("resp_1", "m", RESPONSE, ITEMS)
    ctx.response_store.put("resp_2", "m", RESPONSE, ITEMS)
    ctx.close()
    assert main(["chats", "rm", "--all"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["deleted 1 conversations", "deleted 2 stored API responses"]
    ctx = build_context()
    assert ctx.response_store.count() == 0 and ctx.chat_store.list_conversations() == []
    ctx.close()
    assert main(["audit", "show", "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["event"], e.get("conversations"), e.get("all")) for e in events] == [
        ("chats.deleted", 1, True)
    ]


def test_encrypting_while_open_keeps_the_responses_and_hides_their_words(
    file_keyring: Path,
) -> None:
    ctx = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    kept = ctx.response_store
    kept.put("resp_1", "m", RESPONSE, ITEMS)
    ctx.switch_encryption(True)
    assert cipher.file_state(ctx.paths.database) == "encrypted"
    path = ctx.paths.database
    on_disk = b"".join(p.read_bytes() for p in [path, *cipher.sidecars(path)] if p.exists())
    assert WORD.encode() not in on_disk
    found = kept.get("resp_1")
    assert found is not None and found.items == ITEMS
    kept.put("resp_2", "m", RESPONSE, ITEMS)
    ctx.switch_encryption(False)
    assert kept.count() == 2
    ctx.close()
