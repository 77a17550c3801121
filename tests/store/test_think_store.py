"""Migration 7: a conversation keeps its Think switch, across restarts and upgrades."""

from __future__ import annotations

import pytest

from desktop.base.config import Paths
from desktop.store._chats import ChatStore
from desktop.store._db import Database, applied_migrations, migrate
from desktop.store._migrations import MIGRATIONS

pytestmark = pytest.mark.fast


def test_chats_from_before_the_switch_was_kept_may_think() -> None:
    path = Paths.from_env().database
    old = Database(path)
    migrate(old, MIGRATIONS[:6])  # the schema before migration 7
    old.execute(
        "INSERT INTO conversations(title, model, tags, created, updated) "
        "VALUES ('Old chat', 'glm', '[]', 100.0, 200.0)"
    )
    old.close()

    store = ChatStore(path)
    [conv] = store.list_conversations()
    assert conv.title == "Old chat" and conv.think  # thinking was on for every chat
    store.set_think(conv.id, False)
    store.close()
    reopened = ChatStore(path)
    assert [c.think for c in reopened.list_conversations()] == [False]
    reopened.close()
    database = Database(path)
    assert [v for v, _ in applied_migrations(database)] == [m.version for m in MIGRATIONS]
    database.close()


def test_the_switch_is_kept_for_new_and_ephemeral_chats() -> None:
    store = ChatStore(Paths.from_env().database)
    quiet = store.create_conversation("quiet", "glm", think=False)
    thinking = store.create_conversation("thinking", "glm")
    secret = store.create_conversation("secret", "glm", ephemeral=True, think=False)
    assert [store.get_conversation(c.id).think for c in (quiet, thinking, secret)] == [
        False,
        True,
        False,
    ]
    store.set_think(secret.id, True)
    assert store.get_conversation(secret.id).think
    store.close()


def test_exports_carry_the_switch_and_an_import_restores_it() -> None:
    import json

    import pytest

    from desktop.base.errors import InvalidRequest

    store = ChatStore(Paths.from_env().database)
    quiet = store.create_conversation("quiet", "glm", think=False)
    payload = json.loads(store.export_json([quiet.id]))
    assert payload["conversations"][0]["think"] is False
    assert "Thinking: off" in store.export_markdown([quiet.id])
    assert "Thinking" not in store.export_markdown(
        [store.create_conversation("thinking", "glm").id]
    )
    [copy] = store.import_json(json.dumps(payload))
    assert not copy.think
    del payload["conversations"][0]["think"]  # an export from before the switch was kept
    [older] = store.import_json(json.dumps(payload))
    assert older.think
    payload["conversations"][0]["think"] = "no"
    with pytest.raises(InvalidRequest, match="'think' must be true/false, not text"):
        store.import_json(json.dumps(payload))
    store.close()
