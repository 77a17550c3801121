"""The chat store on a real SQLite file: durability, search, export, deletion, retention."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest, StoreError
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore, open_chat_store
from desktop.store._db import applied_migrations, migrate, open_database
from desktop.store._migrations import MIGRATIONS, Migration

pytestmark = pytest.mark.fast

DAY = 86_400.0


@pytest.fixture
def db_path() -> Path:
    return Paths.from_env().database


@pytest.fixture
def store(db_path: Path) -> ChatStore:
    s = ChatStore(db_path)
    yield s
    s.close()


def test_messages_come_back_with_everything_that_produced_them(
    store: ChatStore, db_path: Path
) -> None:
    conv = store.create_conversation("Trip plan", "glm-4-9b-0414", tags=["travel"])
    store.add_message(conv.id, ChatMessage("user", "Where to in May?"))
    store.add_message(
        conv.id,
        ChatMessage(
            "assistant",
            "Kyoto.",
            reasoning="Think about weather.",
            model="glm-4-9b-0414",
            parameters={"temperature": 0.7},
            prompt_tokens=12,
            completion_tokens=3,
            timings={"generation_s": 0.25},
        ),
    )
    store.close()
    reopened = ChatStore(db_path)
    [header] = reopened.list_conversations()
    assert (header.title, header.model, header.tags) == ("Trip plan", "glm-4-9b-0414", ("travel",))
    user, answer = reopened.get_messages(conv.id)
    assert user.content == "Where to in May?"
    assert answer.reasoning == "Think about weather." and answer.parameters == {"temperature": 0.7}
    assert (answer.prompt_tokens, answer.completion_tokens) == (12, 3)
    assert answer.timings == {"generation_s": 0.25}
    reopened.rename(conv.id, "Kyoto in May")
    assert reopened.get_conversation(conv.id).title == "Kyoto in May"
    reopened.close()


def test_adding_to_a_missing_conversation_is_refused(store: ChatStore) -> None:
    with pytest.raises(InvalidRequest, match="does not exist"):
        store.add_message(42, ChatMessage("user", "hello"))


def test_search_finds_chinese_and_english_words(store: ChatStore) -> None:
    zh = store.create_conversation("中文")
    store.add_message(zh.id, ChatMessage("user", "我想了解向量检索的原理"))
    en = store.create_conversation("English")
    store.add_message(en.id, ChatMessage("user", "How does hybrid retrieval rank documents?"))
    assert [h.conversation_id for h in store.search("检索")] == [zh.id]  # a two-character word
    assert [h.conversation_id for h in store.search("向量")] == [zh.id]
    assert [h.conversation_id for h in store.search("retrieval")] == [en.id]
    assert store.search("量检索原") == []  # characters present, but not as that word
    assert [c.id for c in store.list_conversations(search="hybrid rank")] == [en.id]
    assert store.search('") OR *') == []  # query syntax from the user cannot break FTS


def test_search_ranks_best_first_and_the_sidebar_search_reads_only_the_index(
    store: ChatStore,
) -> None:
    weak = store.create_conversation("weak")
    store.add_message(weak.id, ChatMessage("user", "zebracorn " + "filler words " * 40))
    strong = store.create_conversation("strong")
    store.add_message(strong.id, ChatMessage("user", "zebracorn zebracorn zebracorn"))
    assert [h.conversation_id for h in store.search("zebracorn")] == [strong.id, weak.id]
    assert {c.id for c in store.list_conversations(search="zebracorn")} == {strong.id, weak.id}
    assert [c.id for c in store.list_conversations(search="向量")] == []
    # Encrypted, every table page read is decrypted: the sidebar's search must find a
    # hit's conversation in the small covering index, not in the message's own row.
    disk = store._disk
    assert disk is not None
    statements: list[str] = []
    disk.database.conn.set_trace_callback(statements.append)
    store.list_conversations(search="zebracorn")
    disk.database.conn.set_trace_callback(None)
    plans = [
        " ".join(str(r[3]) for r in disk.database.query("EXPLAIN QUERY PLAN " + sql))
        for sql in statements
        if "MATCH" in sql
    ]
    assert plans and all(
        "messages m USING" not in p and "SEARCH m USING INTEGER" not in p for p in plans
    )
    assert any("COVERING INDEX messages_conversation_by_id" in p for p in plans)


def test_delete_removes_messages_from_search_and_delete_all_scrubs_the_file(
    store: ChatStore, db_path: Path
) -> None:
    keep = store.create_conversation("keep")
    store.add_message(keep.id, ChatMessage("user", "ordinary note"))
    gone = store.create_conversation("gone")
    store.add_message(gone.id, ChatMessage("user", "zebracorn-secret " * 50))
    assert store.delete(gone.id)
    assert not store.delete(gone.id)
    assert store.search("zebracorn") == []
    assert [c.id for c in store.list_conversations()] == [keep.id]
    assert store.delete_all() == 1
    assert store.list_conversations() == []
    blob = db_path.read_bytes() + (
        db_path.with_name(db_path.name + "-wal").read_bytes()
        if db_path.with_name(db_path.name + "-wal").exists()
        else b""
    )
    assert b"zebracorn" not in blob and b"ordinary note" not in blob


def test_retention_deletes_old_conversations_and_nothing_else(db_path: Path) -> None:
    now = time.time()
    store = ChatStore(db_path)
    old = store.create_conversation("old")
    store.add_message(old.id, ChatMessage("user", "from last year", created=now - 400 * DAY))
    recent = store.create_conversation("recent")
    store.add_message(recent.id, ChatMessage("user", "from yesterday", created=now - DAY))
    # An old conversation that was continued recently counts as recent.
    revived = store.create_conversation("revived")
    store.add_message(revived.id, ChatMessage("user", "long ago", created=now - 400 * DAY))
    store.add_message(revived.id, ChatMessage("user", "today", created=now))
    store.close()
    # Conversations are stamped "now" when created; back-date the old one's header.
    database = open_database(db_path)
    database.execute(
        "UPDATE conversations SET created = ?, updated = ? WHERE id = ?",
        (now - 400 * DAY, now - 400 * DAY, old.id),
    )
    database.close()

    reopened = open_chat_store(db_path, retention_days=30)  # applied at start
    assert sorted(c.title for c in reopened.list_conversations()) == ["recent", "revived"]
    assert len(reopened.get_messages(revived.id)) == 2
    assert reopened.apply_retention(30) == 0  # the daily run finds nothing more
    assert reopened.apply_retention(None) == 0
    reopened.close()


def test_ephemeral_conversations_never_touch_disk(db_path: Path) -> None:
    store = ChatStore(db_path)
    saved = store.create_conversation("saved")
    store.add_message(saved.id, ChatMessage("user", "kept"))
    size_before = db_path.stat().st_size
    wal = db_path.with_name(db_path.name + "-wal")
    wal_before = wal.read_bytes() if wal.exists() else b""
    eph = store.create_conversation("private", ephemeral=True)
    assert eph.ephemeral and eph.id < 0
    store.add_message(eph.id, ChatMessage("user", "quokka-private-words"))
    assert [h.conversation_id for h in store.search("quokka")] == [eph.id]
    assert {c.id for c in store.list_conversations()} == {saved.id, eph.id}
    assert "quokka" not in store.export_json()  # "export all" means the saved history
    assert db_path.stat().st_size == size_before
    assert (wal.read_bytes() if wal.exists() else b"") == wal_before
    store.close()
    assert b"quokka" not in db_path.read_bytes()
    again = ChatStore(db_path)
    assert [c.title for c in again.list_conversations()] == ["saved"]
    again.close()


def test_ephemeral_only_setting_keeps_no_file(tmp_path: Path) -> None:
    path = tmp_path / "never.db"
    store = ChatStore(path, ephemeral_only=True)
    conv = store.create_conversation("x")
    store.add_message(conv.id, ChatMessage("user", "hi"))
    assert store.path is None and not path.exists()


def test_json_export_round_trips_and_markdown_is_readable(store: ChatStore, tmp_path: Path) -> None:
    conv = store.create_conversation("Recipe", "kimi", tags=["food"])
    store.add_message(conv.id, ChatMessage("user", "番茄炒蛋怎么做?"))
    store.add_message(
        conv.id,
        ChatMessage(
            "assistant",
            "Beat the eggs.",
            reasoning="steps",
            prompt_tokens=5,
            completion_tokens=4,
            parameters={"seed": 1},
        ),
    )
    exported = store.export_json()
    other = ChatStore(tmp_path / "other.db")
    [copy] = other.import_json(exported)
    assert other.export_json() == exported
    assert [m.content for m in other.get_messages(copy.id)] == ["番茄炒蛋怎么做?", "Beat the eggs."]
    with pytest.raises(InvalidRequest):
        other.import_json("{not json")
    md = store.export_markdown([conv.id])
    assert md.startswith("# Recipe") and "## Assistant" in md and "番茄炒蛋怎么做?" in md
    other.close()


def _export(*conversations: dict[str, object]) -> str:
    return json.dumps({"edgedesk_export": 1, "conversations": list(conversations)})


def _good(title: str) -> dict[str, object]:
    return {
        "title": title,
        "model": "m",
        "tags": ["t"],
        "created": 1.0,
        "collection": None,
        "messages": [{"role": "user", "content": "hi"}],
    }


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("collection", 5, "conversation 3: 'collection' must be text or null, not a number"),
        ("title", ["x"], "conversation 3: 'title' must be text, not a list"),
        ("model", {"a": 1}, "'model' must be text or null, not an object"),
        ("tags", "travel", "'tags' must be a list of text, not text"),
        ("tags", [1], "'tags' must be a list of text, not a list"),
        ("created", "yesterday", "'created' must be a number or null, not text"),
        ("created", True, "'created' must be a number or null, not true/false"),
        ("messages", "hi", "'messages' must be a list, not text"),
        (
            "messages",
            [{"role": "user", "content": 5}],
            "conversation 3, message 1: 'content' must be text, not a number",
        ),
        (
            "messages",
            [{"role": "user", "content": "x", "prompt_tokens": "9"}],
            "'prompt_tokens' must be a whole number or null, not text",
        ),
    ],
)
def test_a_malformed_import_names_the_field_and_adds_nothing(
    store: ChatStore, field: str, value: object, where: str
) -> None:
    store.create_conversation("already here")
    bad = {**_good("third"), field: value}
    with pytest.raises(InvalidRequest, match=re.escape(where)):
        store.import_json(_export(_good("one"), _good("two"), bad))
    assert [c.title for c in store.list_conversations()] == ["already here"]
    assert len(store.import_json(_export(_good("one"), _good("two")))) == 2  # still usable


def test_an_import_that_fails_while_writing_leaves_nothing(store: ChatStore, monkeypatch) -> None:
    # Past the checks, a failure inside SQLite (disk full, ...) rolls the whole import back.
    import desktop.store._chat_sql as chats

    calls = []

    def failing_fts_text(text: str) -> str:
        calls.append(text)
        if len(calls) == 3:
            raise StoreError("disk full")
        return text

    monkeypatch.setattr(chats, "fts_text", failing_fts_text)
    with pytest.raises(StoreError):
        store.import_json(_export(_good("one"), _good("two"), _good("three")))
    assert store.list_conversations() == []


_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from desktop.store._chat_records import ChatMessage
    from desktop.store._chats import ChatStore
    store = ChatStore(Path(sys.argv[1]))
    conv = store.create_conversation("crash test")
    i = 0
    while True:
        store.add_message(conv.id, ChatMessage("user", f"message {i} " + "x" * 2000))
        print(i, flush=True)  # reported only after add_message returned (committed)
        i += 1
""")


def test_kill_9_during_writes_loses_no_committed_message(db_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert proc.stdout is not None
    committed = -1
    for line in proc.stdout:
        committed = int(line)
        if committed >= 40:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    store = ChatStore(db_path)
    [conv] = store.list_conversations()
    contents = [m.content.split(" ")[1] for m in store.get_messages(conv.id)]
    assert len(contents) >= committed + 1
    assert contents[: committed + 1] == [str(i) for i in range(committed + 1)]
    store.add_message(conv.id, ChatMessage("user", "after the crash"))  # still writable
    store.close()


def test_migrations_are_recorded_once_and_only_added(db_path: Path) -> None:
    database = open_database(db_path)
    assert [v for v, _ in applied_migrations(database)] == [m.version for m in MIGRATIONS]
    assert migrate(database) == []  # idempotent
    extra = Migration(
        len(MIGRATIONS) + 1,
        "test column",
        ("ALTER TABLE conversations ADD COLUMN pinned INTEGER DEFAULT 0",),
    )
    assert migrate(database, (*MIGRATIONS, extra)) == [extra.version]
    assert migrate(database, (*MIGRATIONS, extra)) == []
    database.close()
    # Code that knows fewer migrations than the file refuses rather than corrupting it.
    with pytest.raises(StoreError, match="newer EdgeDesk"):
        open_database(db_path)


def test_database_is_in_wal_mode_with_foreign_keys(db_path: Path) -> None:
    database = open_database(db_path)
    assert database.query("PRAGMA journal_mode")[0][0] == "wal"
    assert database.query("PRAGMA foreign_keys")[0][0] == 1
    assert json.loads(json.dumps(database.vec_loaded)) is True
    database.close()
