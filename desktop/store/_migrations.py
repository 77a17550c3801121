"""The numbered migrations that shape the database, oldest first; only ever added.

Each is SQL statements or a step function given the open ``sqlite_utils`` database;
``store._db.migrate`` runs the ones a database lacks. Never change an existing one's SQL:
databases on users' machines already ran it. A new schema change is a new number.
A step imports no live module of the app (whose code may change after it shipped): what
it needs is frozen beside it, as ``_migration_14_items`` for migration 14.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from desktop.store._migration_14_items import item_role, item_text, title_of


@dataclass(frozen=True)
class Migration:
    """One schema step: SQL statements, or a function given the open database."""

    version: int
    name: str
    step: Sequence[str] | Callable[[sqlite_utils.Database], None]


CHAT_SCHEMA = (
    """CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        title TEXT NOT NULL DEFAULT '',
        model TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        created REAL NOT NULL,
        updated REAL NOT NULL)""",
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        content TEXT NOT NULL DEFAULT '',
        reasoning TEXT,
        model TEXT,
        parameters TEXT NOT NULL DEFAULT '{}',
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        timings TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL)""",
    "CREATE INDEX messages_by_conversation ON messages(conversation_id, id)",
    "CREATE INDEX conversations_by_updated ON conversations(updated)",
    # rowid = messages.id; rows are written by the store, removed by this trigger so a
    # cascade from a deleted conversation cannot leave searchable text behind.
    "CREATE VIRTUAL TABLE messages_fts USING fts5(text, tokenize='unicode61')",
    """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        DELETE FROM messages_fts WHERE rowid = old.id; END""",
)

DOCUMENT_SCHEMA = (
    """CREATE TABLE collections (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        embedding_model TEXT,
        dimension INTEGER,
        created REAL NOT NULL)""",
    """CREATE TABLE collection_roots (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (collection_id, path))""",
    """CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        hash TEXT NOT NULL,
        indexed REAL NOT NULL,
        UNIQUE (collection_id, path))""",
    """CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        collection_id INTEGER NOT NULL,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        page INTEGER,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        hash TEXT NOT NULL,
        text TEXT NOT NULL)""",
    "CREATE INDEX chunks_by_document ON chunks(document_id, ordinal)",
    "CREATE INDEX chunks_by_hash ON chunks(collection_id, hash)",
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize='unicode61')",
    """CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM chunks_fts WHERE rowid = old.id; END""",
    """CREATE TABLE skipped_files (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        reason TEXT NOT NULL,
        seen REAL NOT NULL,
        PRIMARY KEY (collection_id, path))""",
)

BITS_SCHEMA = (
    """CREATE TABLE chunk_bits (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        collection_id INTEGER NOT NULL,
        bits BLOB NOT NULL)""",
    "CREATE INDEX chunk_bits_by_collection ON chunk_bits(collection_id)",
    "ALTER TABLE collections ADD COLUMN bits_version INTEGER NOT NULL DEFAULT 0",
    # Any change to a collection's bits bumps its version, so a cached matrix is reloaded.
    """CREATE TRIGGER chunk_bits_insert AFTER INSERT ON chunk_bits BEGIN
        UPDATE collections SET bits_version = bits_version + 1 WHERE id = new.collection_id;
        END""",
    """CREATE TRIGGER chunk_bits_delete AFTER DELETE ON chunk_bits BEGIN
        UPDATE collections SET bits_version = bits_version + 1 WHERE id = old.collection_id;
        END""",
)


def _vector_tables(database: sqlite_utils.Database) -> list[tuple[int, str]]:
    """``(collection id, vec0 table)`` of every collection with stored vectors.

    Vectors exist only where sqlite-vec could be loaded; without it there is nothing for
    a migration step to convert.
    """
    try:
        database.execute("SELECT vec_version()")
    except Exception:
        return []
    names = {r[0] for r in database.execute("SELECT name FROM sqlite_master").fetchall()}
    found = []
    for (collection_id,) in database.execute(
        "SELECT id FROM collections WHERE dimension IS NOT NULL"
    ).fetchall():
        table = f"vec_chunks_{int(collection_id)}"  # retrieval._vectors.vec_table
        if table in names:
            found.append((int(collection_id), table))
    return found


def add_bits(database: sqlite_utils.Database) -> None:
    """Migration step: create ``chunk_bits`` and quantize every stored vector into it."""
    for statement in BITS_SCHEMA:
        database.execute(statement)
    for collection_id, table in _vector_tables(database):
        database.execute(
            "INSERT INTO chunk_bits(chunk_id, collection_id, bits) "  # noqa: S608
            f"SELECT v.rowid, ?, vec_quantize_binary(v.embedding) FROM {table} v",
            (collection_id,),
        )


def add_float_copies(database: sqlite_utils.Database) -> None:
    """Migration step: keep each chunk's float vector beside its bits, for re-scoring.

    A ``vec0`` point lookup reads far more than one vector (about 0.8 ms each at 1024
    dimensions), so re-scoring 80 candidates from it cost more than the exact scan saved.
    """
    database.execute("ALTER TABLE chunk_bits ADD COLUMN embedding BLOB")
    for _, table in _vector_tables(database):
        database.execute(
            f"UPDATE chunk_bits SET embedding = v.embedding FROM {table} v "  # noqa: S608
            "WHERE v.rowid = chunk_bits.chunk_id"
        )


GROUNDING_SCHEMA = (
    # The collection a chat is grounded in (NULL: none); a name, not a foreign key, so
    # deleting a collection keeps the chat and the window can say what went missing.
    "ALTER TABLE conversations ADD COLUMN collection TEXT",
    # JSON list of the numbered sources an answer was given, each marked cited or not
    # (NULL: the answer was not grounded). See store._cited_passages.
    "ALTER TABLE messages ADD COLUMN sources TEXT",
)


RESPONSES_SCHEMA = (
    # Responses stored by POST /v1/responses (``store``), for GET and previous_response_id:
    # the response object and the conversation items that led to it (input + output),
    # as JSON. ``created`` drives retention like a conversation's ``updated``; ``owner``
    # is the API key's name (each client sees only its own; '' without keys).
    """CREATE TABLE api_responses (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL,
        created REAL NOT NULL,
        response TEXT NOT NULL,
        items TEXT NOT NULL)""",
    "CREATE INDEX api_responses_by_created ON api_responses(created)",
)


THINK_SCHEMA = (
    # Whether the chat's reasoning model may think before answering (the window's Think
    # switch): 0 off, 1 or NULL (chats from before this column) on.
    "ALTER TABLE conversations ADD COLUMN think INTEGER",
)


ENDING_SCHEMA = (
    # How an answer ended: the engine's finish reason ("stop", "length", "cancelled" for
    # one stopped by the user) or "error" for one that broke off, with the error's message;
    # NULL for messages from before this column (and for questions).
    "ALTER TABLE messages ADD COLUMN finish_reason TEXT",
    "ALTER TABLE messages ADD COLUMN error TEXT",
)


TOOLS_SCHEMA = (
    # An answer that called tools: its rounds as JSON, each the words and reasoning before
    # the calls, the calls (id, name, arguments text) and their results; NULL for none.
    "ALTER TABLE messages ADD COLUMN tool_steps TEXT",
)


SEARCH_INDEX_SCHEMA = (
    # Which conversation a full-text hit belongs to, from a small index rather than the
    # message's own row: the sidebar's search then reads a few index pages instead of
    # one table page per hit (each decrypted when the database is encrypted).
    "CREATE INDEX messages_conversation_by_id ON messages(id, conversation_id)",
)


ATTACHMENTS_SCHEMA = (
    # Pictures and files attached to a message, in order: the bytes as given (kept in the
    # database, so encrypted with it and deleted with the conversation by the cascade
    # from messages) and, for a document, the text the model reads of it.
    """CREATE TABLE attachments (
        id INTEGER PRIMARY KEY,
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        mime TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        text TEXT NOT NULL DEFAULT '',
        data BLOB NOT NULL)""",
    "CREATE INDEX attachments_by_message ON attachments(message_id, ordinal)",
)


VERSIONS_SCHEMA = (
    # A regenerated answer's other versions, as a JSON list of message objects (the JSON
    # export's form), oldest first; NULL for none. The row's own columns hold the version
    # the user chose, and ``version`` is its place among all of them (0-based; NULL: 0).
    "ALTER TABLE messages ADD COLUMN versions TEXT",
    "ALTER TABLE messages ADD COLUMN version INTEGER",
)


PARAMETERS_SCHEMA = (
    # A chat's sampling settings from the window's parameters panel, as a JSON object
    # (temperature, max_tokens, top_p, top_k, min_p, repeat_penalty, seed); NULL: chats
    # from before this column, whose temperature is read from their last answer.
    "ALTER TABLE conversations ADD COLUMN parameters TEXT",
)


API_CONVERSATIONS_SCHEMA = (
    # Responses kept by the Responses API (``store``) are conversations too, hidden from
    # the window: ``origin`` 'app' (the window, the CLI, imports) or 'responses'; ``owner``
    # the API key's name ('' without keys), each client seeing only its own; the
    # response's id and the response object as JSON. Each message of such a conversation
    # keeps its Responses item verbatim (JSON) in ``item``, its words in ``content``
    # (not in ``messages_fts``: the window's search must not find, nor be crowded out
    # by, the many copies of each turn an API client's chained responses keep).
    "ALTER TABLE conversations ADD COLUMN origin TEXT NOT NULL DEFAULT 'app'",
    "ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE conversations ADD COLUMN response_id TEXT",
    "ALTER TABLE conversations ADD COLUMN response TEXT",
    """CREATE UNIQUE INDEX conversations_by_response ON conversations(response_id)
        WHERE response_id IS NOT NULL""",
    "ALTER TABLE messages ADD COLUMN item TEXT",
)


def _kept_items(raw: str) -> list[tuple[str, Any]]:
    """``(item JSON, item)`` of each item of an ``api_responses.items`` value.

    A value that is not a JSON list (never written by EdgeDesk) is kept verbatim as one
    row rather than lost: reading it back fails as reading the old row did.
    """
    try:
        items = json.loads(raw)
    except ValueError:
        return [(raw, None)]
    if not isinstance(items, list):
        return [(raw, None)]
    return [(json.dumps(item, ensure_ascii=False), item) for item in items]


def responses_into_conversations(database: sqlite_utils.Database) -> None:
    """Migration step: every ``api_responses`` row becomes a conversation of origin
    'responses' with one message per item, then the old table goes."""
    for statement in API_CONVERSATIONS_SCHEMA:
        database.execute(statement)
    rows = database.execute(
        "SELECT id, owner, model, created, response, items FROM api_responses ORDER BY created, id"
    ).fetchall()
    for response_id, owner, model, created, response, raw in rows:
        kept = _kept_items(str(raw))
        cur = database.execute(
            "INSERT INTO conversations(title, model, tags, created, updated, origin, owner, "
            "response_id, response) VALUES (?, ?, '[]', ?, ?, 'responses', ?, ?, ?)",
            (
                title_of([item for _, item in kept]),
                model,
                created,
                created,
                owner,
                response_id,
                response,
            ),
        )
        for text, item in kept:
            database.execute(
                "INSERT INTO messages(conversation_id, role, content, created, item) "
                "VALUES (?, ?, ?, ?, ?)",
                (cur.lastrowid, item_role(item), item_text(item), created, text),
            )
    database.execute("DROP TABLE api_responses")


USAGE_SCHEMA = (
    # One row per finished API request, content-free (store/_usage.py, docs/privacy.md).
    """CREATE TABLE usage_requests (
        id INTEGER PRIMARY KEY,
        time REAL NOT NULL,
        key_name TEXT,
        client TEXT NOT NULL,
        model TEXT,
        route TEXT NOT NULL,
        status INTEGER NOT NULL,
        error_kind TEXT,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        ttft_ms REAL,
        total_ms REAL NOT NULL,
        tokens_per_s REAL,
        generation_ms REAL NOT NULL DEFAULT 0,
        ttft_bucket INTEGER,
        total_bucket INTEGER NOT NULL)""",
    "CREATE INDEX usage_requests_by_time ON usage_requests(time)",
    # Sums by the hour, kept up to date as rows are added (single rows go after a week);
    # durations as histograms: packed (uint16 bucket, uint32 count) pairs.
    """CREATE TABLE usage_hourly (
        id INTEGER PRIMARY KEY,
        time REAL NOT NULL,
        key_name TEXT,
        client TEXT NOT NULL,
        model TEXT,
        route TEXT NOT NULL,
        status INTEGER NOT NULL,
        error_kind TEXT,
        requests INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        generation_ms REAL NOT NULL DEFAULT 0,
        ttft_histogram BLOB NOT NULL DEFAULT x'',
        total_histogram BLOB NOT NULL DEFAULT x'')""",
    "CREATE INDEX usage_hourly_by_time ON usage_hourly(time)",
)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "conversations, messages and their full-text index", CHAT_SCHEMA),
    Migration(2, "document collections, chunks and their full-text index", DOCUMENT_SCHEMA),
    Migration(3, "binary-quantized chunk vectors for the two-stage search", add_bits),
    Migration(4, "float chunk vectors beside their bits, for exact re-scoring", add_float_copies),
    Migration(
        5, "a conversation's document collection and each answer's sources", GROUNDING_SCHEMA
    ),
    Migration(6, "responses stored by the Responses API", RESPONSES_SCHEMA),
    Migration(7, "whether a conversation's model may think first", THINK_SCHEMA),
    Migration(8, "how each answer ended: stopped, broken off and why", ENDING_SCHEMA),
    Migration(9, "the tool calls an answer made and their results", TOOLS_SCHEMA),
    Migration(10, "each message's conversation in a small index, for search", SEARCH_INDEX_SCHEMA),
    Migration(11, "pictures and files attached to messages", ATTACHMENTS_SCHEMA),
    Migration(12, "a regenerated answer's other versions and the one chosen", VERSIONS_SCHEMA),
    Migration(13, "a conversation's sampling parameters", PARAMETERS_SCHEMA),
    Migration(
        14, "Responses API responses kept as hidden conversations", responses_into_conversations
    ),
    Migration(15, "content-free usage of the API, per request and by the hour", USAGE_SCHEMA),
)
