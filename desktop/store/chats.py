"""Conversations kept on this device: save, search, export, delete, expire.

``ChatStore`` is what the window and the server call. Ephemeral conversations live in a
private in-memory database with the same schema and code path, so they behave exactly
like saved ones and leave nothing on disk; their ids are negative so the two never mix.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from desktop.errors import InvalidRequest, StoreError
from desktop.store.chat_export import (
    ReadFile,
    attachment_files,
    json_export,
    markdown_export,
    parse_export,
)
from desktop.store.chat_records import Attachment, ChatMessage, Conversation, SearchHit
from desktop.store.cipher import DatabaseKey
from desktop.store.db import Database, fts_query, fts_text, open_database
from desktop.store.sources import decode_sources, encode_sources

DAY_S = 86_400.0
# Every query below reads and writes only conversations of origin 'app' (the window's,
# the CLI's, imported ones): the Responses API's kept responses (origin 'responses', see
# store.responses) share the tables but are never listed, found, opened or changed here.
MAX_ID = 2**63 - 1  # SQLite's largest integer; a bigger one cannot name a conversation


class _Chats:
    """The SQL behind ChatStore, for one database (on disk or in memory)."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self.database = database
        self.clock = clock

    def create(
        self,
        title: str,
        model: str | None,
        tags: Sequence[str],
        created: float | None = None,
        collection: str | None = None,
        *,
        think: bool = True,
        parameters: dict[str, Any] | None = None,
    ) -> int:
        with self.database.transaction():
            return self.insert(
                title, model, tags, created, collection, think=think, parameters=parameters
            )

    def insert(
        self,
        title: str,
        model: str | None,
        tags: Sequence[str],
        created: float | None = None,
        collection: str | None = None,
        *,
        think: bool = True,
        parameters: dict[str, Any] | None = None,
    ) -> int:
        """``create`` inside the caller's transaction."""
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
            "INSERT INTO messages(conversation_id, role, content, reasoning, model, "
            "parameters, prompt_tokens, completion_tokens, timings, created, sources, "
            "finish_reason, error, tool_steps, versions, version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                conv_id,
                message.role,
                message.content,
                message.reasoning,
                message.model,
                json.dumps(message.parameters),
                message.prompt_tokens,
                message.completion_tokens,
                json.dumps(message.timings),
                created,
                encode_sources(message.sources),
                message.finish_reason,
                message.error,
                json.dumps(list(message.tool_steps), ensure_ascii=False)
                if message.tool_steps
                else None,
                *_versions_columns(message),
            ),
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
                    json.dumps(list(message.tool_steps), ensure_ascii=False)
                    if message.tool_steps
                    else None,
                    *_versions_columns(message),
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

    def delete(self, conv_id: int) -> bool:
        with self.database.transaction():
            cur = self.database.execute(
                "DELETE FROM conversations WHERE id = ? AND origin = 'app'", (conv_id,)
            )
        return bool(cur.rowcount)

    def delete_before(self, cutoff: float) -> int:
        with self.database.transaction():
            cur = self.database.execute(
                "DELETE FROM conversations WHERE updated < ? AND origin = 'app'", (cutoff,)
            )
        return int(cur.rowcount)


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
            else _Chats(open_database(path, synchronous="FULL", key=key), clock)
        )
        self._memory = _Chats(open_database(None), clock)

    @property
    def path(self) -> Path | None:
        """The database file (None when nothing is kept on disk)."""
        return None if self._disk is None else self._disk.database.path

    @property
    def database(self) -> Database | None:
        """The database on disk (None when nothing is kept on disk)."""
        return None if self._disk is None else self._disk.database

    def _for(self, conv_id: int) -> tuple[_Chats, int]:
        if not -MAX_ID <= conv_id <= MAX_ID:
            raise InvalidRequest(f"no conversation with id {conv_id}")
        if conv_id < 0 or self._disk is None:
            return self._memory, abs(conv_id)
        return self._disk, conv_id

    def _parts(self) -> list[tuple[_Chats, bool, int]]:
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
        parameters: dict[str, Any] | None = None,
    ) -> Conversation:
        """Start a conversation (grounded in ``collection``); an ephemeral one stays in memory."""
        keep = self._memory if ephemeral or self._disk is None else self._disk
        sign = -1 if keep is self._memory else 1
        row_id = keep.create(
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
        self._update(
            conv_id, "UPDATE conversations SET title = ? WHERE id = ? AND origin = 'app'", title
        )

    def set_tags(self, conv_id: int, tags: Sequence[str]) -> None:
        """Replace a conversation's tags."""
        self._update(
            conv_id,
            "UPDATE conversations SET tags = ? WHERE id = ? AND origin = 'app'",
            json.dumps(sorted(set(tags))),
        )

    def set_collection(self, conv_id: int, collection: str | None) -> None:
        """Ground the conversation in ``collection`` from now on (None or "": none)."""
        self._update(
            conv_id,
            "UPDATE conversations SET collection = ? WHERE id = ? AND origin = 'app'",
            collection or None,
        )

    def set_think(self, conv_id: int, think: bool) -> None:
        """Whether the conversation's reasoning model may think first, from now on."""
        self._update(
            conv_id,
            "UPDATE conversations SET think = ? WHERE id = ? AND origin = 'app'",
            int(think),
        )

    def set_parameters(self, conv_id: int, parameters: dict[str, Any]) -> None:
        """The conversation's sampling settings from now on (a JSON object)."""
        self._update(
            conv_id,
            "UPDATE conversations SET parameters = ? WHERE id = ? AND origin = 'app'",
            json.dumps(parameters),
        )

    def _update(self, conv_id: int, sql: str, value: str | int | None) -> None:
        chats, row_id = self._for(conv_id)
        with chats.database.transaction():
            cur = chats.database.execute(sql, (value, row_id))
        if not cur.rowcount:
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
        gone = chats.delete(row_id)
        if gone:
            with chats.database.lock:
                chats.database.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
                if chats.database.path is not None:
                    chats.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

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


def _object(raw: str | None) -> dict[str, Any] | None:
    """A stored JSON object; a damaged value reads as none rather than hiding the chat."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _versions_columns(message: ChatMessage) -> tuple[str | None, int | None]:
    """The ``versions`` and ``version`` column values of a message (NULLs for none)."""
    if not message.versions:
        return None, None
    return json.dumps(list(message.versions), ensure_ascii=False), message.version


def _read_versions(raw: str | None, version: int | None) -> dict[str, Any]:
    """Stored versions; a damaged value reads as none rather than hiding the chat."""
    versions = _steps(raw)
    if not versions:
        return {}
    return {"versions": versions, "version": min(max(version or 0, 0), len(versions))}


def _steps(raw: str | None) -> tuple[dict[str, Any], ...]:
    """Stored tool rounds; a damaged value reads as none rather than hiding the chat."""
    if not raw:
        return ()
    try:
        steps = json.loads(raw)
    except ValueError:
        return ()
    return tuple(s for s in steps if isinstance(s, dict)) if isinstance(steps, list) else ()
