"""The one SQLite database: how it is opened, and the numbered migrations that shape it.

Connections come from ``sqlean`` (a SQLite build that can load extensions on every OS;
many Python builds, macOS's among them, ship a ``sqlite3`` that cannot) so the vector
extension ``sqlite-vec`` is always available. Migrations are only ever *added*: each has
a number, runs once inside a transaction, and is recorded in ``schema_migrations``.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlite_utils

from desktop.errors import StoreError
from desktop.private import private_file, restrict_files

BUSY_TIMEOUT_MS = 5000


def _driver() -> ModuleType:
    """sqlean when installed (extension loading everywhere), else the stdlib sqlite3."""
    try:
        return importlib.import_module("sqlean")
    except ImportError:  # pragma: no cover - sqlean is a dependency; stdlib keeps chats working
        return importlib.import_module("sqlite3")


@dataclass(frozen=True)
class Migration:
    """One schema step: SQL statements, or a function given the open database."""

    version: int
    name: str
    step: Sequence[str] | Callable[[sqlite_utils.Database], None]


_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])")


def fts_text(text: str) -> str:
    """Text as the FTS index stores it: every CJK character its own token.

    FTS5's unicode61 tokenizer sees a run of Chinese as one giant "word", so a search for
    a two-character word inside it finds nothing; the trigram tokenizer misses words
    shorter than three characters. One token per character plus phrase queries finds
    Chinese words of any length, and English words keep ordinary BM25 ranking.
    """
    return _CJK.sub(r" \1 ", text)


def fts_query(query: str, *, any_term: bool = False) -> str | None:
    """An FTS5 MATCH expression for what a user typed (None if it has no searchable term).

    Each word becomes a quoted phrase (so punctuation cannot break the query syntax), a
    Chinese run becomes the phrase of its characters; terms are ANDed, or ORed with
    ``any_term`` (retrieval wants recall, the chat search wants precision).
    """
    terms: list[str] = []
    for word in re.findall(r"\w+", query):
        tokens = fts_text(word).split()
        terms.append('"' + " ".join(tokens) + '"')
    if not terms:
        return None
    return (" OR " if any_term else " AND ").join(terms)


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
            "SELECT id FROM collections WHERE dimension IS NOT NULL").fetchall():
        table = f"vec_chunks_{int(collection_id)}"  # retrieval.vectors.vec_table
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
            (collection_id,))


def add_float_copies(database: sqlite_utils.Database) -> None:
    """Migration step: keep each chunk's float vector beside its bits, for re-scoring.

    A ``vec0`` point lookup reads far more than one vector (about 0.8 ms each at 1024
    dimensions), so re-scoring 80 candidates from it cost more than the exact scan saved.
    """
    database.execute("ALTER TABLE chunk_bits ADD COLUMN embedding BLOB")
    for _, table in _vector_tables(database):
        database.execute(f"UPDATE chunk_bits SET embedding = v.embedding FROM {table} v "  # noqa: S608
                         "WHERE v.rowid = chunk_bits.chunk_id")


GROUNDING_SCHEMA = (
    # The collection a chat is grounded in (NULL: none); a name, not a foreign key, so
    # deleting a collection keeps the chat and the window can say what went missing.
    "ALTER TABLE conversations ADD COLUMN collection TEXT",
    # JSON list of the numbered sources an answer was given, each marked cited or not
    # (NULL: the answer was not grounded). See store.sources.
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


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "conversations, messages and their full-text index", CHAT_SCHEMA),
    Migration(2, "document collections, chunks and their full-text index", DOCUMENT_SCHEMA),
    Migration(3, "binary-quantized chunk vectors for the two-stage search", add_bits),
    Migration(4, "float chunk vectors beside their bits, for exact re-scoring",
              add_float_copies),
    Migration(5, "a conversation's document collection and each answer's sources",
              GROUNDING_SCHEMA),
    Migration(6, "responses stored by the Responses API", RESPONSES_SCHEMA),
    Migration(7, "whether a conversation's model may think first", THINK_SCHEMA),
    Migration(8, "how each answer ended: stopped, broken off and why", ENDING_SCHEMA),
)


class Database:
    """An open database: the sqlite-utils wrapper, a lock, and explicit transactions.

    One connection is shared by the threads that call in (a UI worker, the server); the
    lock makes each public store call atomic with respect to the others.
    """

    def __init__(self, path: Path | None, *, synchronous: str = "NORMAL") -> None:
        driver = _driver()
        target = ":memory:" if path is None else str(path)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                private_file(path)  # conversations are owner-only (SQLite copies the mode)
            except OSError as exc:
                raise StoreError(f"cannot create the database {path}: {exc}") from None
        try:
            conn = driver.connect(target, check_same_thread=False, isolation_level=None)
        except driver.Error as exc:
            raise StoreError(f"cannot open the database {target}: {exc}") from None
        self.path = path
        self.conn: Any = conn
        self.lock = threading.RLock()
        self.vec_loaded = _load_vec(conn)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if path is not None:
            try:  # the first statement that reads the file: a foreign file fails here
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except driver.DatabaseError as exc:
                conn.close()
                raise StoreError(
                    f"{path} is not a readable EdgeDesk database ({exc}); move it away "
                    "(EdgeDesk then starts an empty one) or put back a backup") from None
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: could not switch the database to WAL mode")
            # WAL/SHM files left by an older version may still be readable by others.
            restrict_files(Path(f"{path}{suffix}") for suffix in ("-wal", "-shm"))
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        # Freed pages are zeroed, so deleted conversations do not linger in the file.
        conn.execute("PRAGMA secure_delete = ON")
        self.db = sqlite_utils.Database(conn)

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Run one statement and return the cursor."""
        return self.conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """All rows of a query, as tuples."""
        return list(self.conn.execute(sql, params).fetchall())

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def scrub(self) -> None:
        """Make deleted data really gone: merge FTS segments, checkpoint the WAL, VACUUM."""
        with self.lock:
            for table in ("messages_fts", "chunks_fts"):
                if self.query("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
                    # Fixed table names, not user input.
                    self.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")  # noqa: S608
            self.execute("VACUUM")
            if self.path is not None:
                self.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self.lock:
            self.conn.close()


def _load_vec(conn: Any) -> bool:
    """Load sqlite-vec into ``conn``; False when this SQLite cannot load extensions."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except Exception:  # the chat store works without vectors; retrieval reports it
        return False
    return True


def applied_migrations(database: Database) -> list[tuple[int, str]]:
    """The migrations recorded in this database, oldest first."""
    return [(int(v), str(n)) for v, n in database.query(
        "SELECT version, name FROM schema_migrations ORDER BY version")]


def migrate(database: Database, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the migrations this database lacks, each in its own transaction; returns them."""
    database.execute("""CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)""")
    done = {version for version, _ in applied_migrations(database)}
    known = {m.version for m in migrations}
    if done and max(done) > max(known, default=0):
        raise StoreError(
            f"{database.path} was written by a newer EdgeDesk (schema {max(done)}); "
            "update EdgeDesk to open it"
        )
    ran: list[int] = []
    for migration in sorted(migrations, key=lambda m: m.version):
        if migration.version in done:
            continue
        with database.transaction():
            if callable(migration.step):
                migration.step(database.db)
            else:
                for statement in migration.step:
                    database.execute(statement)
            database.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)",
                             (migration.version, migration.name, time.time()))
        ran.append(migration.version)
    return ran


def open_database(path: Path | None, *, synchronous: str = "NORMAL") -> Database:
    """Open (creating if needed) and migrate the database at ``path``; None = in memory."""
    database = Database(path, synchronous=synchronous)
    try:
        migrate(database)
    except Exception as exc:
        database.close()
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"cannot prepare the database {path}: {exc}") from None
    return database
