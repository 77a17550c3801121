"""Responses kept for the Responses API's ``store`` and ``previous_response_id``.

A stored response is the response object a client got back plus the conversation items
that led to it (its input, the earlier turns it continued, its output), so a later
request naming it as ``previous_response_id`` carries the whole conversation. Each is a
conversation of the one conversation store (``store._chats``' tables, its database
connection) with origin 'responses', one message per item holding the item verbatim;
the window and ``edgedesk chats`` never list, find or open those. They expire with the
same retention period and go with ``edgedesk chats rm --all``. Under the
``EphemeralOnly`` policy nothing is kept: the store has no database and says why when
asked to keep something.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.base.errors import InvalidRequest
from desktop.store._api_items import item_role, item_text, title_of
from desktop.store._db import Database

if TYPE_CHECKING:
    from desktop.store._chats import ChatStore

DAY_S = 86_400.0
NOT_KEPT = (
    "this server keeps no responses (store: true needs the local database); "
    "send store: false and pass the conversation in input"
)
EPHEMERAL_ONLY = (
    "store: true is not allowed here: your organization's EphemeralOnly "
    "policy keeps no conversations on this device; send store: false and "
    "pass the whole conversation in input"
)


@dataclass(frozen=True)
class StoredResponse:
    """One kept response: the object returned to the client and its conversation items."""

    id: str
    model: str
    created: float
    # the Responses API's JSON, kept as sent (desktop.server owns its shape)
    response: dict[str, object]
    items: list[dict[str, object]]


class ResponseStore:
    """Stored API responses; every call is safe from any thread (the database locks)."""

    def __init__(
        self,
        database: Database | None,
        *,
        refusal: str = NOT_KEPT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database  # not this store's: whoever opened it closes it
        self.refusal = refusal  # why nothing can be kept, when there is no database
        self._clock = clock
        # Told after responses were deleted (the composition root drops the copies kept
        # outside the database: the prompt cache). Set before the store is shared.
        self.on_deleted: Callable[[], None] | None = None

    def _deleted(self, count: int) -> None:
        if count and self.on_deleted is not None:
            self.on_deleted()

    @classmethod
    def over(cls, chats: ChatStore, *, clock: Callable[[], float] = time.time) -> ResponseStore:
        """The responses kept in ``chats``' database, over its connection (none under
        EphemeralOnly or without a database file); closing ``chats`` closes it."""
        refusal = EPHEMERAL_ONLY if chats.ephemeral_only else NOT_KEPT
        return cls(chats.database, refusal=refusal, clock=clock)

    @property
    def enabled(self) -> bool:
        """Whether responses can be kept at all."""
        return self._db is not None

    @property
    def database(self) -> Database | None:
        """The database on disk the responses are kept in (None: none kept)."""
        return self._db

    def _database(self) -> Database:
        if self._db is None:
            raise InvalidRequest(self.refusal, param="store")
        return self._db

    def put(
        self,
        response_id: str,
        model: str,
        # the Responses API's JSON, kept as sent (desktop.server owns its shape)
        response: dict[str, object],
        items: list[dict[str, object]],
        *,
        owner: str = "",
    ) -> None:
        """Keep ``response`` and its conversation ``items`` for ``owner`` (a key's identity,
        ``server.security.owner_of``; '' without keys)."""
        db = self._database()
        now = self._clock()
        with db.transaction():
            # Kept again under the same id by the same key: the new one replaces the old
            # (ids are the server's, random; another key's is never touched).
            db.execute(
                "DELETE FROM conversations WHERE response_id = ? AND owner = ? "
                "AND origin = 'responses'",
                (response_id, owner),
            )
            cur = db.execute(
                "INSERT INTO conversations(title, model, tags, created, updated, origin, "
                "owner, response_id, response) VALUES (?, ?, '[]', ?, ?, 'responses', ?, ?, ?)",
                (
                    title_of(items),
                    model,
                    now,
                    now,
                    owner,
                    response_id,
                    json.dumps(response, ensure_ascii=False),
                ),
            )
            conv_id = int(cur.lastrowid)
            # The words go in ``content`` but not in the search index (see migration 14).
            for item in items:
                db.execute(
                    "INSERT INTO messages(conversation_id, role, content, created, item) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        conv_id,
                        item_role(item),
                        item_text(item),
                        now,
                        json.dumps(item, ensure_ascii=False),
                    ),
                )

    def get(
        self, response_id: str, *, owner: str = "", named: tuple[str, float] | None = None
    ) -> StoredResponse | None:
        """``owner``'s kept response with this id, or None (also when nothing is kept).

        ``named``: the key's name and when it was made. A response stored before owners
        were keys' identities is owned by a name; it is the key's when the key already
        existed then (made no later), never a key made again under that name since.
        """
        if self._db is None:
            return None
        which, args = _owned(owner, named)
        with self._db.lock:
            rows = self._db.query(
                "SELECT id, model, created, response FROM conversations "  # noqa: S608
                f"WHERE response_id = ? AND {which} AND origin = 'responses'",
                (response_id, *args),
            )
            if not rows:
                return None
            conv_id, model, created, response = rows[0]
            items = self._db.query(
                "SELECT item FROM messages WHERE conversation_id = ? ORDER BY id", (conv_id,)
            )
        return StoredResponse(
            response_id,
            str(model),
            float(created),
            json.loads(response),
            [json.loads(item) for (item,) in items],
        )

    def delete(
        self, response_id: str, *, owner: str = "", named: tuple[str, float] | None = None
    ) -> bool:
        """Delete ``owner``'s kept response (``named`` as for ``get``); True if it existed."""
        if self._db is None:
            return False
        which, args = _owned(owner, named)
        with self._db.transaction():
            cur = self._db.execute(
                f"DELETE FROM conversations WHERE response_id = ? AND {which} "  # noqa: S608
                "AND origin = 'responses'",
                (response_id, *args),
            )
        self._deleted(int(cur.rowcount))
        return bool(cur.rowcount)

    def delete_before(self, cutoff: float) -> int:
        """Delete responses kept before ``cutoff`` (epoch seconds); returns how many."""
        if self._db is None:
            return 0
        with self._db.transaction():
            # A kept response is never added to: its ``updated`` is when it was kept.
            cur = self._db.execute(
                "DELETE FROM conversations WHERE updated < ? AND origin = 'responses'", (cutoff,)
            )
        self._deleted(int(cur.rowcount))
        return int(cur.rowcount)

    def apply_retention(self, days: int | None, *, now: float | None = None) -> int:
        """Delete responses older than ``days`` (None: keep); returns how many went."""
        if days is None or self._db is None:
            return 0
        if days < 1:
            raise InvalidRequest("retention must be at least one day")
        cutoff = (self._clock() if now is None else now) - days * DAY_S
        return self.delete_before(cutoff)

    def close(self) -> None:
        """Nothing: the connection is the chat store's, closed with it. Here so that a
        store just opened is closed alike when its retention fails (``retained_at_open``)."""

    def count(self) -> int:
        """How many responses are kept."""
        if self._db is None:
            return 0
        with self._db.lock:
            return int(
                self._db.query("SELECT count(*) FROM conversations WHERE origin = 'responses'")[0][
                    0
                ]
            )


def _owned(owner: str, named: tuple[str, float] | None) -> tuple[str, tuple[Any, ...]]:
    """The SQL condition (and its arguments) for a conversation of ``owner``: its
    identity, or its name for what was stored under it since the key was made."""
    if named is None or not named[0]:
        return "owner = ?", (owner,)
    return "(owner = ? OR (owner = ? AND created >= ?))", (owner, named[0], named[1])
