"""Responses kept for the Responses API's ``store`` and ``previous_response_id``.

A stored response is the response object a client got back plus the conversation items
that led to it (its input, the earlier turns it continued, its output), so a later
request naming it as ``previous_response_id`` carries the whole conversation. They live
in the same database as conversations, expire with the same retention period and go
with ``edgedesk chats rm --all``. Under the ``EphemeralOnly`` policy nothing is kept:
the store is built without a database and says why when asked to keep something.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.errors import InvalidRequest
from desktop.store.cipher import DatabaseKey
from desktop.store.db import Database, open_database

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
    response: dict[str, Any]
    items: list[dict[str, Any]]


class ResponseStore:
    """Stored API responses; every call is safe from any thread (the database locks)."""

    def __init__(
        self,
        database: Database | None,
        *,
        refusal: str = NOT_KEPT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self.refusal = refusal  # why nothing can be kept, when there is no database
        self._clock = clock

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
        response: dict[str, Any],
        items: list[dict[str, Any]],
        *,
        owner: str = "",
    ) -> None:
        """Keep ``response`` and its conversation ``items`` for ``owner`` (a key's name)."""
        db = self._database()
        with db.transaction():
            db.execute(
                "INSERT OR REPLACE INTO api_responses(id, owner, model, created, "
                "response, items) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    response_id,
                    owner,
                    model,
                    self._clock(),
                    json.dumps(response, ensure_ascii=False),
                    json.dumps(items, ensure_ascii=False),
                ),
            )

    def get(self, response_id: str, *, owner: str = "") -> StoredResponse | None:
        """``owner``'s kept response with this id, or None (also when nothing is kept)."""
        if self._db is None:
            return None
        with self._db.lock:
            rows = self._db.query(
                "SELECT id, model, created, response, items FROM "
                "api_responses WHERE id = ? AND owner = ?",
                (response_id, owner),
            )
        if not rows:
            return None
        rid, model, created, response, items = rows[0]
        return StoredResponse(
            str(rid), str(model), float(created), json.loads(response), json.loads(items)
        )

    def delete(self, response_id: str, *, owner: str = "") -> bool:
        """Delete ``owner``'s kept response; True if it existed."""
        if self._db is None:
            return False
        with self._db.transaction():
            cur = self._db.execute(
                "DELETE FROM api_responses WHERE id = ? AND owner = ?", (response_id, owner)
            )
        return bool(cur.rowcount)

    def delete_before(self, cutoff: float) -> int:
        """Delete responses kept before ``cutoff`` (epoch seconds); returns how many."""
        if self._db is None:
            return 0
        with self._db.transaction():
            cur = self._db.execute("DELETE FROM api_responses WHERE created < ?", (cutoff,))
        return int(cur.rowcount)

    def delete_all(self) -> int:
        """Delete every kept response and scrub the file; returns how many went."""
        count = self.delete_before(float("inf"))
        if self._db is not None:
            self._db.scrub()
        return count

    def apply_retention(self, days: int | None, *, now: float | None = None) -> int:
        """Delete responses older than ``days`` (None: keep); returns how many went."""
        if days is None or self._db is None:
            return 0
        if days < 1:
            raise InvalidRequest("retention must be at least one day")
        cutoff = (self._clock() if now is None else now) - days * DAY_S
        return self.delete_before(cutoff)

    def close(self) -> None:
        """Close the database connection (idempotent)."""
        if self._db is not None:
            self._db.close()

    def count(self) -> int:
        """How many responses are kept."""
        if self._db is None:
            return 0
        with self._db.lock:
            return int(self._db.query("SELECT count(*) FROM api_responses")[0][0])


def open_response_store(
    path: Path,
    *,
    retention_days: int | None = None,
    ephemeral_only: bool = False,
    key: DatabaseKey | None = None,
) -> ResponseStore:
    """The store in the database at ``path`` with retention applied (none if ephemeral only)."""
    if ephemeral_only:
        return ResponseStore(None, refusal=EPHEMERAL_ONLY)
    store = ResponseStore(open_database(path, synchronous="FULL", key=key))
    try:
        store.apply_retention(retention_days)
    except Exception:
        store.close()
        raise
    return store
