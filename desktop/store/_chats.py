"""Conversations kept on this device: save, search, export, delete, expire.

``ChatStore`` is what the window and the server call. Ephemeral conversations live in a
private in-memory database with the same schema and code path, so they behave exactly
like saved ones and leave nothing on disk; their ids are negative so the two never mix.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from desktop.base.errors import InvalidRequest, StoreError
from desktop.store._chat_export import (
    ReadFile,
    attachment_files,
    json_export,
    markdown_export,
    parse_export,
)
from desktop.store._chat_records import ChatMessage, Conversation, SearchHit
from desktop.store._chat_sql import ChatTables, Column
from desktop.store._cipher import DatabaseKey
from desktop.store._db import Database, open_database

DAY_S = 86_400.0
# Only conversations of origin 'app' are seen here; the SQL that says so is in chat_sql.
MAX_ID = 2**63 - 1  # SQLite's largest integer; a bigger one cannot name a conversation


class ChatStore:
    """Every conversation on this device; ephemeral ones (negative ids) only in memory."""

    def __init__(
        self,
        path: Path | None,
        *,
        clock: Callable[[], float] = time.time,
        ephemeral_only: bool = False,
        key: DatabaseKey | None = None,
    ) -> None:
        self._clock = clock
        self.ephemeral_only = ephemeral_only  # policy EphemeralOnly: nothing on disk
        # Full sync: a message reported saved must survive a power cut, not only a crash.
        self._disk = (
            None
            if path is None or ephemeral_only
            else ChatTables(open_database(path, synchronous="FULL", key=key), clock)
        )
        self._memory = ChatTables(open_database(None), clock)
        # Told after conversations were deleted (the composition root drops the copies
        # kept outside the database: the prompt cache). Set before the store is shared.
        self.on_deleted: Callable[[], None] | None = None

    def _deleted(self, count: int) -> None:
        if count and self.on_deleted is not None:
            self.on_deleted()

    @property
    def path(self) -> Path | None:
        """The database file (None when nothing is kept on disk)."""
        return None if self._disk is None else self._disk.database.path

    @property
    def database(self) -> Database | None:
        """The database on disk (None when nothing is kept on disk)."""
        return None if self._disk is None else self._disk.database

    def _for(self, conv_id: int) -> tuple[ChatTables, int]:
        if not -MAX_ID <= conv_id <= MAX_ID:
            raise InvalidRequest(f"no conversation with id {conv_id}")
        if conv_id < 0 or self._disk is None:
            return self._memory, abs(conv_id)
        return self._disk, conv_id

    def _parts(self) -> list[tuple[ChatTables, bool, int]]:
        parts = [(self._memory, True, -1)]
        if self._disk is not None:
            parts.insert(0, (self._disk, False, 1))
        return parts

    # ------------------------------------------------------------------ writing
    def create_conversation(
        self,
        title: str = "",
        model: str | None = None,
        *,
        ephemeral: bool = False,
        tags: Sequence[str] = (),
        collection: str | None = None,
        think: bool = True,
        # Any: desktop.chat's sampling JSON, stored as given
        parameters: dict[str, Any] | None = None,
    ) -> Conversation:
        """Start a conversation (grounded in ``collection``); an ephemeral one stays in memory."""
        keep = self._memory if ephemeral or self._disk is None else self._disk
        sign = -1 if keep is self._memory else 1
        with keep.database.transaction():
            row_id = keep.insert(
                title, model, tags, collection=collection, think=think, parameters=parameters
            )
        return self.get_conversation(sign * row_id)

    def add_message(self, conv_id: int, message: ChatMessage) -> int:
        """Append ``message``; it is durable when this returns. Returns its id."""
        chats, row_id = self._for(conv_id)
        return chats.add(row_id, message)

    def replace_message(self, conv_id: int, message_id: int, message: ChatMessage) -> None:
        """Rewrite message ``message_id`` of a conversation with ``message``'s fields (its
        role, time and place stay): another version of an answer was chosen."""
        chats, row_id = self._for(conv_id)
        chats.replace(row_id, abs(message_id), message)

    def rename(self, conv_id: int, title: str) -> None:
        """Change a conversation's title."""
        self._update(conv_id, "title", title)

    def set_tags(self, conv_id: int, tags: Sequence[str]) -> None:
        """Replace a conversation's tags."""
        self._update(conv_id, "tags", json.dumps(sorted(set(tags))))

    def set_collection(self, conv_id: int, collection: str | None) -> None:
        """Ground the conversation in ``collection`` from now on (None or "": none)."""
        self._update(conv_id, "collection", collection or None)

    def set_model(self, conv_id: int, model: str | None) -> None:
        """The model the conversation's next turns use, from now on (None: none chosen)."""
        self._update(conv_id, "model", model or None)

    def set_think(self, conv_id: int, think: bool) -> None:
        """Whether the conversation's reasoning model may think first, from now on."""
        self._update(conv_id, "think", int(think))

    # Any: desktop.chat's sampling JSON, stored as given
    def set_parameters(self, conv_id: int, parameters: dict[str, Any]) -> None:
        """The conversation's sampling settings from now on (a JSON object)."""
        self._update(conv_id, "parameters", json.dumps(parameters))

    def _update(self, conv_id: int, column: Column, value: str | int | None) -> None:
        chats, row_id = self._for(conv_id)
        if not chats.set_column(row_id, column, value):
            raise InvalidRequest(f"conversation {conv_id} does not exist")

    # ------------------------------------------------------------------ reading
    def get_conversation(self, conv_id: int) -> Conversation:
        """One conversation's header, or InvalidRequest if there is none."""
        chats, row_id = self._for(conv_id)
        rows = chats.conversations([row_id])
        if not rows:
            raise InvalidRequest(f"conversation {conv_id} does not exist")
        ephemeral = chats is self._memory
        return chats.header(rows[0], ephemeral, -1 if ephemeral else 1)

    def list_conversations(self, search: str | None = None) -> list[Conversation]:
        """Conversations, most recently active first; ``search`` keeps those with a match."""
        found: list[Conversation] = []
        for chats, ephemeral, sign in self._parts():
            ids = None
            if search:
                ids = chats.matching_conversations(search)
                if not ids:
                    continue
            found += [chats.header(r, ephemeral, sign) for r in chats.conversations(ids)]
        return sorted(found, key=lambda c: (c.updated, c.id), reverse=True)

    def get_messages(self, conv_id: int) -> list[ChatMessage]:
        """The messages of a conversation, in order."""
        chats, row_id = self._for(conv_id)
        return chats.messages(row_id)

    def search(self, query: str) -> list[SearchHit]:
        """Messages containing every word of ``query`` (Chinese included), best first."""
        hits: list[SearchHit] = []
        for chats, _, sign in self._parts():
            hits += [
                SearchHit(sign * int(r[0]), r[1], sign * int(r[2]), r[3], _snippet(r[4], query))
                for r in chats.search(query)
            ]
        return hits

    # ------------------------------------------------------------------ deleting
    def delete(self, conv_id: int) -> bool:
        """Delete one conversation and its messages; True if it existed."""
        if not self._exists(conv_id):
            return False
        chats, row_id = self._for(conv_id)
        deleted = chats.delete(row_id)
        self._deleted(int(deleted))
        return deleted

    def delete_many(self, conv_ids: Sequence[int]) -> int:
        """Delete the given conversations, or none if any id names no conversation.

        All or nothing: a typo in the third id must not leave the first two deleted with
        only an error on screen. Returns how many were deleted (repeats count once).
        """
        wanted = list(dict.fromkeys(conv_ids))
        missing = [i for i in wanted if not self._exists(i)]
        if missing:
            raise InvalidRequest(
                f"no conversation with id {', '.join(map(str, missing))}; nothing was "
                "deleted (see 'edgedesk chats list')"
            )
        for conv_id in wanted:
            self.delete(conv_id)
        return len(wanted)

    def _exists(self, conv_id: int) -> bool:
        try:
            chats, row_id = self._for(conv_id)
        except InvalidRequest:
            return False
        return bool(chats.conversations([row_id]))

    def delete_all(self) -> int:
        """Delete every conversation and scrub the file (VACUUM); returns how many."""
        count = 0
        for chats, _, _ in self._parts():
            count += chats.delete_before(float("inf"))
            chats.database.scrub()
        # Even with no conversation left to delete: "delete everything" means the copies too.
        self._deleted(1)
        return count

    def apply_retention(self, days: int | None, *, now: float | None = None) -> int:
        """Delete conversations idle for more than ``days``; returns how many went."""
        if days is None:
            return 0
        if days < 1:
            raise InvalidRequest("retention must be at least one day")
        cutoff = (self._clock() if now is None else now) - days * DAY_S
        count = sum(chats.delete_before(cutoff) for chats, _, _ in self._parts())
        if count and self._disk is not None:
            self._disk.database.scrub()
        self._deleted(count)
        return count

    # ------------------------------------------------------------------ export / import
    def export_json(
        self, conv_ids: Sequence[int] | None = None, *, files: str | None = None
    ) -> str:
        """The given conversations (default: all) as JSON that ``import_json`` reads back;
        attachments named in the folder ``files`` beside it, or inline when None."""
        return json_export([(c, self.get_messages(c.id)) for c in self._selected(conv_ids)], files)

    def export_files(self, conv_ids: Sequence[int] | None = None) -> dict[str, bytes]:
        """The attachments of the given conversations by the file name an export uses."""
        return attachment_files([(c, self.get_messages(c.id)) for c in self._selected(conv_ids)])

    def import_json(self, text: str, read_file: ReadFile | None = None) -> list[Conversation]:
        """Add the conversations of an ``export_json`` document; returns the new headers.

        ``read_file`` reads the attachment files the export names beside itself.
        """
        # Every field is checked before anything is written, and all is written in one
        # transaction: a malformed conversation further down leaves nothing behind.
        parsed = parse_export(text, read_file)
        target = self._disk or self._memory
        sign = 1 if target is self._disk else -1
        row_ids: list[int] = []
        with target.database.transaction():
            for item, messages in parsed:
                row_id = target.insert(
                    item.get("title", ""),
                    item.get("model"),
                    item.get("tags", []),
                    created=item.get("created"),
                    collection=item.get("collection"),
                    think=item.get("think", True),
                    parameters=item.get("parameters"),
                )
                for message in messages:
                    target.append(row_id, message)
                row_ids.append(row_id)
        return [self.get_conversation(sign * row_id) for row_id in row_ids]

    def export_markdown(
        self, conv_ids: Sequence[int] | None = None, *, files: str | None = None
    ) -> str:
        """The given conversations (default: all) as readable Markdown (attachments
        linked from the folder ``files`` beside it, or only named when None)."""
        return markdown_export(
            [(c, self.get_messages(c.id)) for c in self._selected(conv_ids)], files
        )

    def _selected(self, conv_ids: Sequence[int] | None) -> list[Conversation]:
        if conv_ids is None:
            return [c for c in self.list_conversations() if not c.ephemeral]
        return [self.get_conversation(i) for i in conv_ids]

    def close(self) -> None:
        """Close the databases."""
        for chats, _, _ in self._parts():
            chats.database.close()


def _snippet(content: str, query: str, width: int = 80) -> str:
    words = [w for w in query.split() if w]
    lowered = content.lower()
    at = min((p for p in (lowered.find(w.lower()) for w in words) if p >= 0), default=0)
    start = max(0, at - width // 2)
    text = content[start : start + width].replace("\n", " ")
    return ("…" if start else "") + text + ("…" if start + width < len(content) else "")


def open_chat_store(
    path: Path,
    *,
    retention_days: int | None = None,
    ephemeral_only: bool = False,
    key: DatabaseKey | None = None,
) -> ChatStore:
    """Open the store at ``path`` and apply the retention period (as at every start)."""
    store = ChatStore(path, ephemeral_only=ephemeral_only, key=key)
    try:
        store.apply_retention(retention_days)
    except StoreError:
        store.close()
        raise
    return store
