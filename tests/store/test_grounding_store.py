"""Grounded chats in the store: the chosen collection and each answer's sources survive a
restart, an upgrade from the previous schema, export/import and the CLI export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest
from desktop.cli import main
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from desktop.store._cited_passages import SNIPPET_CHARS, Source
from desktop.store._db import Database, applied_migrations, migrate
from desktop.store._migrations import MIGRATIONS

pytestmark = pytest.mark.fast


@pytest.fixture
def db_path() -> Path:
    return Paths.from_env().database


SOURCES = (
    Source(1, "/docs/travel.txt", None, 4, 4, "Trains under four hours.", cited=False),
    Source(2, "/docs/policy.pdf", 3, 10, 14, "Staff get 25 days of leave.", cited=True),
)


def _grounded_chat(store: ChatStore, *, ephemeral: bool = False) -> int:
    conv = store.create_conversation("Leave", "glm", ephemeral=ephemeral, collection="handbook")
    store.add_message(conv.id, ChatMessage("user", "How many days of leave?"))
    store.add_message(
        conv.id, ChatMessage("assistant", "25 days [2].", model="glm", sources=SOURCES)
    )
    return conv.id


def test_an_existing_database_upgrades_and_keeps_its_chats(db_path: Path) -> None:
    old = Database(db_path)
    migrate(old, MIGRATIONS[:4])  # the schema before grounded chats were kept
    old.execute(
        "INSERT INTO conversations(title, model, tags, created, updated) "
        "VALUES ('Old chat', 'kimi', '[\"work\"]', 100.0, 200.0)"
    )
    for role, text in (("user", "old question"), ("assistant", "old answer")):
        cur = old.execute(
            "INSERT INTO messages(conversation_id, role, content, created) VALUES (1, ?, ?, 150.0)",
            (role, text),
        )
        old.execute("INSERT INTO messages_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, text))
    old.close()

    store = ChatStore(db_path)
    [conv] = store.list_conversations()
    assert (conv.title, conv.model, conv.tags, conv.updated) == (
        "Old chat",
        "kimi",
        ("work",),
        200.0,
    )
    assert conv.collection is None
    messages = store.get_messages(conv.id)
    assert [(m.role, m.content, m.sources) for m in messages] == [
        ("user", "old question", ()),
        ("assistant", "old answer", ()),
    ]
    assert [h.conversation_id for h in store.search("question")] == [conv.id]
    store.set_collection(conv.id, "papers")  # the new columns are writable
    store.close()
    reopened = Database(db_path)
    assert [v for v, _ in applied_migrations(reopened)] == [m.version for m in MIGRATIONS]
    assert reopened.query("SELECT sources FROM messages") == [(None,), (None,)]
    assert reopened.query("SELECT collection FROM conversations") == [("papers",)]
    reopened.close()


def test_collection_and_sources_survive_a_restart(db_path: Path) -> None:
    store = ChatStore(db_path)
    conv_id = _grounded_chat(store)
    store.close()
    store = ChatStore(db_path)
    assert store.get_conversation(conv_id).collection == "handbook"
    question, answer = store.get_messages(conv_id)
    assert question.sources == () and answer.sources == SOURCES
    store.set_collection(conv_id, "")  # "No documents"
    assert store.get_conversation(conv_id).collection is None
    with pytest.raises(InvalidRequest, match="does not exist"):
        store.set_collection(conv_id + 1, "handbook")
    store.close()


def test_ephemeral_chats_keep_collection_and_sources_while_open(db_path: Path) -> None:
    store = ChatStore(db_path)
    conv_id = _grounded_chat(store, ephemeral=True)
    assert conv_id < 0
    store.set_collection(conv_id, "papers")
    assert store.get_conversation(conv_id).collection == "papers"
    assert store.get_messages(conv_id)[1].sources == SOURCES
    store.close()
    assert b"policy.pdf" not in db_path.read_bytes()


def test_a_stored_snippet_is_bounded(db_path: Path) -> None:
    store = ChatStore(db_path)
    conv = store.create_conversation("long")
    store.add_message(
        conv.id,
        ChatMessage(
            "assistant",
            "see [1]",
            sources=(Source(1, "/docs/long.txt", None, 1, 900, "word " * 5000, cited=True),),
        ),
    )
    [stored] = store.get_messages(conv.id)[0].sources
    assert len(stored.text) == SNIPPET_CHARS and stored.path == "/docs/long.txt"
    store.close()


def test_export_import_round_trip_keeps_sources_and_old_exports_import(
    db_path: Path, tmp_path: Path
) -> None:
    store = ChatStore(db_path)
    conv_id = _grounded_chat(store)
    exported = store.export_json()
    data = json.loads(exported)["conversations"][0]
    assert data["collection"] == "handbook"
    assert data["messages"][1]["sources"][1] == {
        "n": 2,
        "path": "/docs/policy.pdf",
        "page": 3,
        "line_start": 10,
        "line_end": 14,
        "text": "Staff get 25 days of leave.",
        "cited": True,
    }
    other = ChatStore(tmp_path / "other.db")
    [copy] = other.import_json(exported)
    assert copy.collection == "handbook"
    assert other.get_messages(copy.id)[1].sources == SOURCES
    assert other.export_json() == exported

    # An export written before grounded chats existed: no collection, no sources.
    for message in data["messages"]:
        del message["sources"]
    del data["collection"]
    [older] = other.import_json(json.dumps({"edgedesk_export": 1, "conversations": [data]}))
    assert older.collection is None
    assert [m.sources for m in other.get_messages(older.id)] == [(), ()]

    # A malformed source is refused before anything is written.
    data["messages"][1]["sources"] = [{"n": 1, "path": "/x"}]
    before = len(other.list_conversations())
    with pytest.raises(InvalidRequest, match="line_start"):
        other.import_json(json.dumps({"conversations": [data]}))
    assert len(other.list_conversations()) == before
    other.close()

    md = store.export_markdown([conv_id])
    answer_part = md.split("## Assistant", 1)[1]
    assert "Documents: handbook" in md
    assert "- [2] policy.pdf (/docs/policy.pdf p. 3, lines 10-14) — cited" in answer_part
    assert "- [1] travel.txt (/docs/travel.txt line 4)\n" in answer_part
    store.close()


def test_cli_export_includes_the_sources(capsys: pytest.CaptureFixture[str]) -> None:
    store = ChatStore(Paths.from_env().database)
    _grounded_chat(store)
    store.close()
    assert main(["chats", "export", "--format", "json"]) == 0
    [conv] = json.loads(capsys.readouterr().out)["conversations"]
    assert conv["collection"] == "handbook"
    assert [s["path"] for s in conv["messages"][1]["sources"]] == [
        "/docs/travel.txt",
        "/docs/policy.pdf",
    ]
    assert main(["chats", "export"]) == 0
    assert "[2] policy.pdf (/docs/policy.pdf p. 3, lines 10-14) — cited" in capsys.readouterr().out
