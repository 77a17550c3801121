"""A response kept before migration 14 is still served and continued after the upgrade."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from desktop.base.config import Paths
from desktop.store._db import Database, migrate
from desktop.store._migrations import MIGRATIONS
from tests.server.conftest import serve

OLD_ID = "resp_kept_before_the_upgrade"
OLD_ITEMS: list[dict[str, Any]] = [
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "tell me a story about a quokka"}],
    },
    {
        "type": "message",
        "id": "msg_old",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Once a quokka smiled at the sea.", "annotations": []}
        ],
    },
]
OLD_RESPONSE: dict[str, Any] = {
    "id": OLD_ID,
    "object": "response",
    "created_at": 1_000,
    "status": "completed",
    "model": "tiny-chat",
    "output": OLD_ITEMS[1:],
    "store": True,
    "usage": {"input_tokens": 9, "output_tokens": 8, "total_tokens": 17},
}


def _old_install(home: Path) -> None:
    """A data folder at schema 13 whose ``api_responses`` holds one response of key 'tests'."""
    old = Database(Paths.from_env({"EDGEDESK_HOME": str(home)}).database)
    migrate(old, MIGRATIONS[:13])
    old.execute(
        "INSERT INTO conversations(title, model, tags, created, updated) "
        "VALUES ('A window chat', 'glm', '[]', 100.0, 200.0)"
    )
    old.execute(
        "INSERT INTO api_responses(id, owner, model, created, response, items) "
        "VALUES (?, 'tests', 'tiny-chat', 1000.0, ?, ?)",
        (OLD_ID, json.dumps(OLD_RESPONSE), json.dumps(OLD_ITEMS)),
    )
    old.close()


def test_an_old_stored_response_is_read_and_continued_after_the_upgrade(
    tmp_path: Path, tiny_chat: Path
) -> None:
    _old_install(tmp_path / "home")
    with (
        serve(tmp_path / "home", [tiny_chat]) as served,
        openai.OpenAI(base_url=served.url, api_key=served.key, max_retries=0, timeout=60) as c,
    ):
        # Stored under the name 'tests' at time 1000: it is the key's only if the key
        # existed then. The key the server made now is a key made again under that name.
        with pytest.raises(openai.NotFoundError):
            c.responses.retrieve(OLD_ID)
        kept = json.loads(served.keys.path.read_text(encoding="utf-8"))
        kept["keys"]["tests"]["created"] = "1970-01-01T00:08:20+00:00"  # made at 500
        served.keys.path.write_text(json.dumps(kept), encoding="utf-8")
        old = c.responses.retrieve(OLD_ID)
        assert old.output_text == "Once a quokka smiled at the sea."
        follow = c.responses.create(
            model="tiny-chat", input="and then?", previous_response_id=OLD_ID, max_output_tokens=1
        )
        alone = c.responses.create(
            model="tiny-chat", input="and then?", max_output_tokens=1, store=False
        )
        # The old question and answer are part of the new prompt.
        assert follow.usage.input_tokens > alone.usage.input_tokens + 8
        listed = httpx.get(
            f"{served.url}/responses/{follow.id}/input_items",
            headers={"authorization": f"Bearer {served.key}"},
        ).json()["data"]
        assert listed[:2] == OLD_ITEMS  # kept exactly as they were
        with (
            openai.OpenAI(
                base_url=served.url, api_key=served.keys.create("other"), max_retries=0
            ) as other,
            pytest.raises(openai.NotFoundError),
        ):
            other.responses.retrieve(OLD_ID)
        # The window still shows its one chat, and no API conversation.
        assert [x.title for x in served.ctx.chat_store.list_conversations()] == ["A window chat"]
        assert c.responses.delete(OLD_ID) is None
        assert c.responses.retrieve(follow.id).id == follow.id  # it carries its own copy
