"""Migration 8: how an answer ended (stopped, broken off and why) is kept and exported."""

from __future__ import annotations

import json

from desktop.base.config import Paths
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from desktop.store._db import Database, applied_migrations, migrate
from desktop.store._migrations import MIGRATIONS


def test_answers_from_before_the_column_read_back_with_no_ending() -> None:
    path = Paths.from_env().database
    old = Database(path)
    migrate(old, MIGRATIONS[:7])  # the schema before migration 8
    old.execute(
        "INSERT INTO conversations(title, model, tags, created, updated) "
        "VALUES ('Old chat', 'glm', '[]', 100.0, 200.0)"
    )
    old.execute(
        "INSERT INTO messages(conversation_id, role, content, parameters, timings, "
        "created) VALUES (1, 'assistant', 'an old answer', '{}', '{}', 150.0)"
    )
    old.close()

    store = ChatStore(path)
    [conv] = store.list_conversations()
    [message] = store.get_messages(conv.id)
    assert (message.content, message.finish_reason, message.error) == ("an old answer", None, None)
    assert "*(" not in store.export_markdown()  # nothing said about how it ended
    store.close()
    database = Database(path)
    assert [v for v, _ in applied_migrations(database)] == [m.version for m in MIGRATIONS]
    database.close()


def test_the_ending_survives_a_json_export_and_import_and_shows_in_markdown() -> None:
    store = ChatStore(Paths.from_env().database)
    conv = store.create_conversation("flaky", "gpu/fails")
    store.add_message(conv.id, ChatMessage("user", "hi"))
    store.add_message(
        conv.id,
        ChatMessage("assistant", "hi again", finish_reason="error", error="the GPU node fell over"),
    )
    store.add_message(conv.id, ChatMessage("user", "go on"))
    store.add_message(conv.id, ChatMessage("assistant", "once upon", finish_reason="cancelled"))
    exported = store.export_json([conv.id])
    assert [
        m.get("finish_reason") for m in json.loads(exported)["conversations"][0]["messages"]
    ] == [None, "error", None, "cancelled"]
    [copy] = store.import_json(exported)
    assert [(m.finish_reason, m.error) for m in store.get_messages(copy.id)] == [
        (None, None),
        ("error", "the GPU node fell over"),
        (None, None),
        ("cancelled", None),
    ]
    markdown = store.export_markdown([copy.id])
    assert "hi again\n\n*(broken off: the GPU node fell over)*" in markdown
    assert "once upon\n\n*(stopped)*" in markdown
    store.close()
