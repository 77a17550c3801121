"""The SQL of the conversation tables, for one database (on disk or in memory).

``ChatTables`` is what ``store._chats.ChatStore`` runs on each of its two databases; ids
here are row ids (the facade gives ephemeral ones their sign). Every statement reads and
writes only conversations of origin 'app' (the window's, the CLI's, imported ones): the
Responses API's kept responses (origin 'responses', see store._responses) share the
tables but are never listed, found, opened or changed here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from desktop.base.errors import InvalidRequest
from desktop.store._chat_records import Attachment, ChatMessage, Conversation
from desktop.store._cited_passages import decode_sources, encode_sources
from desktop.store._db import Database, fts_query, fts_text

# The conversation columns a setter may change (``ChatTables.set_column``).
Column = Literal["title", "tags", "collection", "think", "parameters", "model"]
_SET_COLUMN: dict[Column, str] = {
    "title": "UPDATE conversations SET title = ? WHERE id = ? AND origin = 'app'",
    "tags": "UPDATE conversations SET tags = ? WHERE id = ? AND origin = 'app'",
    "collection": "UPDATE conversations SET collection = ? WHERE id = ? AND origin = 'app'",
    "think": "UPDATE conversations SET think = ? WHERE id = ? AND origin = 'app'",
    "parameters": "UPDATE conversations SET parameters = ? WHERE id = ? AND origin = 'app'",
    "model": "UPDATE conversations SET model = ? WHERE id = ? AND origin = 'app'",
}


class ChatTables:
    """The SQL of the 'app' conversations in one database; ChatStore's callers' threads."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self.database = database
        self.clock = clock

    def insert(
        self,
        title: str,
        model: str | None,
        tags: Sequence[str],
        created: float | None = None,
        collection: str | None = None,
        *,
        think: bool = True,
        # desktop.chat's sampling JSON, stored as given
        parameters: dict[str, object] | None = None,
    ) -> int:
        """A new conversation, inside the caller's transaction; returns its row id."""
        now = self.clock() if created is None else created
        cur = self.database.execute(
            "INSERT INTO conversations(title, model, tags, created, updated, collection, "
            "think, parameters) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                title,
                model,
                json.dumps(list(tags)),
                now,
                now,
                collection or None,
                int(think),
                None if parameters is None else json.dumps(parameters),
            ),
        )
        return int(cur.lastrowid)

    def add(self, conv_id: int, message: ChatMessage) -> int:
        """Append a message in its own transaction; InvalidRequest if no such conversation."""
        with self.database.transaction():
            if not self.database.query(
                "SELECT 1 FROM conversations WHERE id = ? AND origin = 'app'", (conv_id,)
            ):
                raise InvalidRequest(f"conversation {conv_id} does not exist")
            return self.append(conv_id, message)

    def append(self, conv_id: int, message: ChatMessage) -> int:
        """``add`` inside the caller's transaction, to a conversation known to exist."""
        created = self.clock() if message.created is None else message.created
        cur = self.database.execute(
            "INSERT INTO messages(conversation_id, role, created, content, reasoning, model, "
            "parameters, prompt_tokens, completion_tokens, timings, sources, "
            "finish_reason, error, tool_steps, versions, version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (conv_id, message.role, created, *_message_columns(message)),
        )
        message_id = int(cur.lastrowid)
        for ordinal, item in enumerate(message.attachments):
            self.database.execute(
                "INSERT INTO attachments(message_id, ordinal, kind, name, mime, sha256, "
                "text, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    message_id,
                    ordinal,
                    item.kind,
                    item.name,
                    item.mime,
                    item.sha256,
                    item.text,
                    item.data,
                ),
            )
        self.database.execute(
            "INSERT INTO messages_fts(rowid, text) VALUES (?, ?)",
            (message_id, fts_text(message.content)),
        )
        self.database.execute(
            "UPDATE conversations SET updated = max(updated, ?) WHERE id = ?", (created, conv_id)
        )
        return message_id

    def header(self, row: Sequence[Any], ephemeral: bool, sign: int) -> Conversation:
        """A ``conversations`` row as a Conversation, its id given ``sign``."""
        return Conversation(
            sign * int(row[0]),
            row[1],
            row[2],
            tuple(json.loads(row[3])),
            float(row[4]),
            float(row[5]),
            ephemeral,
            row[6],
            row[7] != 0,
            _object(row[8]),
        )

    def conversations(self, ids: Iterable[int] | None = None) -> list[tuple[Any, ...]]:
        """Conversation rows (those of ``ids``, default all), most recently active first."""
        sql = (
            "SELECT id, title, model, tags, created, updated, collection, think, "
            "parameters FROM conversations WHERE origin = 'app'"
        )
        if ids is None:
            return self.database.query(sql + " ORDER BY updated DESC, id DESC")
        wanted = list(ids)
        marks = ",".join("?" * len(wanted))
        return self.database.query(
            sql + f" AND id IN ({marks}) ORDER BY updated DESC, id DESC", wanted
        )

    def messages(self, conv_id: int) -> list[ChatMessage]:
        """A conversation's messages with their attachments, in order."""
        rows = self.database.query(
            "SELECT id, role, content, reasoning, model, parameters, prompt_tokens, "
            "completion_tokens, timings, created, sources, finish_reason, error, tool_steps, "
            "versions, version FROM messages WHERE conversation_id = ? "
            "AND EXISTS (SELECT 1 FROM conversations WHERE id = ? AND origin = 'app') ORDER BY id",
            (conv_id, conv_id),
        )
        attached = self.attachments(conv_id)
        return [
            ChatMessage(
                role=r[1],
                content=r[2],
                reasoning=r[3],
                model=r[4],
                parameters=json.loads(r[5]),
                prompt_tokens=r[6],
                completion_tokens=r[7],
                timings=json.loads(r[8]),
                created=float(r[9]),
                id=int(r[0]),
                sources=decode_sources(r[10]),
                finish_reason=r[11],
                error=r[12],
                tool_steps=_steps(r[13]),
                **_read_versions(r[14], r[15]),
                attachments=tuple(attached.get(int(r[0]), ())),
            )
            for r in rows
        ]

    def attachments(self, conv_id: int) -> dict[int, list[Attachment]]:
        """The attachments of a conversation's messages, by message id, in order."""
        found: dict[int, list[Attachment]] = {}
        for r in self.database.query(
            "SELECT a.message_id, a.kind, a.name, a.mime, a.sha256, a.text, a.data "
            "FROM attachments a JOIN messages m ON m.id = a.message_id "
            "WHERE m.conversation_id = ? ORDER BY a.message_id, a.ordinal",
            (conv_id,),
        ):
            found.setdefault(int(r[0]), []).append(
                Attachment(str(r[1]), str(r[2]), str(r[3]), bytes(r[6]), str(r[4]), str(r[5] or ""))
            )
        return found

    def replace(self, conv_id: int, message_id: int, message: ChatMessage) -> None:
        """Rewrite a stored message's words and versions in place (another version chosen)."""
        with self.database.transaction():
            cur = self.database.execute(
                "UPDATE messages SET content = ?, reasoning = ?, model = ?, parameters = ?, "
                "prompt_tokens = ?, completion_tokens = ?, timings = ?, sources = ?, "
                "finish_reason = ?, error = ?, tool_steps = ?, versions = ?, version = ? "
                "WHERE id = ? AND conversation_id = ? "
                "AND EXISTS (SELECT 1 FROM conversations WHERE id = ? AND origin = 'app')",
                (
                    *_message_columns(message),
                    message_id,
                    conv_id,
                    conv_id,
                ),
            )
            if not cur.rowcount:
                raise InvalidRequest(f"conversation {conv_id} has no message {message_id}")
            # The search finds the words shown: the chosen version's.
            self.database.execute("DELETE FROM messages_fts WHERE rowid = ?", (message_id,))
            self.database.execute(
                "INSERT INTO messages_fts(rowid, text) VALUES (?, ?)",
                (message_id, fts_text(message.content)),
            )

    def search(self, query: str) -> list[tuple[Any, ...]]:
        """The best 200 matching messages as (conversation, title, id, role, content) rows."""
        match = fts_query(query)
        if match is None:
            return []
        # The best 200 rowids first, from the FTS index alone; only then are those
        # messages' rows read. Joining before the sort read (and, encrypted, decrypted)
        # every matching message's page, most of them thrown away by the LIMIT.
        return self.database.query(
            "SELECT m.conversation_id, c.title, m.id, m.role, m.content "
            "FROM (SELECT rowid, bm25(messages_fts) AS rank FROM messages_fts "
            "      WHERE messages_fts MATCH ? ORDER BY rank LIMIT 200) AS f "
            "JOIN messages m ON m.id = f.rowid "
            "JOIN conversations c ON c.id = m.conversation_id AND c.origin = 'app' "
            "ORDER BY f.rank, m.id",
            (match,),
        )

    def matching_conversations(self, query: str) -> set[int]:
        """The conversations of the best 200 hits, read from the index alone."""
        match = fts_query(query)
        if match is None:
            return set()
        # INDEXED BY: the planner would look the rowid up in the table itself, one
        # (decrypted) page per hit; the covering index holds the same answer.
        return {
            int(r[0])
            for r in self.database.query(
                "SELECT DISTINCT m.conversation_id "
                "FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                "      ORDER BY bm25(messages_fts) LIMIT 200) AS f "
                "JOIN messages m INDEXED BY messages_conversation_by_id ON m.id = f.rowid",
                (match,),
            )
        }

    def set_column(self, conv_id: int, column: Column, value: str | int | None) -> bool:
        """Change one column of a conversation; False if there is no such conversation."""
        with self.database.transaction():
            cur = self.database.execute(_SET_COLUMN[column], (value, conv_id))
        return bool(cur.rowcount)

    def delete(self, conv_id: int) -> bool:
        """Delete a conversation and tidy the index and the log; True if it existed."""
        with self.database.transaction():
            cur = self.database.execute(
                "DELETE FROM conversations WHERE id = ? AND origin = 'app'", (conv_id,)
            )
        gone = bool(cur.rowcount)
        if gone:
            with self.database.lock:
                self.database.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
                if self.database.path is not None:
                    self.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    def delete_before(self, cutoff: float) -> int:
        """Delete the conversations idle since before ``cutoff``; returns how many."""
        with self.database.transaction():
            cur = self.database.execute(
                "DELETE FROM conversations WHERE updated < ? AND origin = 'app'", (cutoff,)
            )
        return int(cur.rowcount)


# Any: whatever JSON object the column holds; its reader checks it
def _object(raw: str | None) -> dict[str, Any] | None:
    """A stored JSON object; a damaged value reads as none rather than hiding the chat."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _message_columns(message: ChatMessage) -> tuple[Any, ...]:
    """A message's values for the columns content .. version, as append and replace list them."""
    return (
        message.content,
        message.reasoning,
        message.model,
        json.dumps(message.parameters),
        message.prompt_tokens,
        message.completion_tokens,
        json.dumps(message.timings),
        encode_sources(message.sources),
        message.finish_reason,
        message.error,
        json.dumps(list(message.tool_steps), ensure_ascii=False) if message.tool_steps else None,
        *_versions_columns(message),
    )


def _versions_columns(message: ChatMessage) -> tuple[str | None, int | None]:
    """The ``versions`` and ``version`` column values of a message (NULLs for none)."""
    if not message.versions:
        return None, None
    return json.dumps(list(message.versions), ensure_ascii=False), message.version


# Any: keyword arguments of ChatMessage (versions, version) or none
def _read_versions(raw: str | None, version: int | None) -> dict[str, Any]:
    """Stored versions; a damaged value reads as none rather than hiding the chat."""
    versions = _steps(raw)
    if not versions:
        return {}
    return {"versions": versions, "version": min(max(version or 0, 0), len(versions))}


# Any: stored JSON objects, damaged ones dropped; their reader checks fields
def _steps(raw: str | None) -> tuple[dict[str, Any], ...]:
    """Stored tool rounds; a damaged value reads as none rather than hiding the chat."""
    if not raw:
        return ()
    try:
        steps = json.loads(raw)
    except ValueError:
        return ()
    return tuple(s for s in steps if isinstance(s, dict)) if isinstance(steps, list) else ()
