"""The one SQLite database: how it is opened, and how its numbered migrations are applied.

Connections come from ``sqlcipher3`` (SQLCipher 4: a SQLite build that can load
extensions on every OS, and encrypt; many Python builds, macOS's among them, ship a
``sqlite3`` that cannot) so the vector extension ``sqlite-vec`` is always available.
Every connection of the process, plaintext or encrypted, uses that one SQLite: a
loadable extension keeps one pointer to the SQLite that loaded it last, so ``sqlite-vec``
loaded into two different SQLite libraries calls the wrong one and crashes.

Migrations are only ever *added*: each has a number, runs once inside a transaction, and
is recorded in ``schema_migrations``; the migrations themselves are listed in
``store._migrations``.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlite_utils

from desktop.base.errors import StoreError
from desktop.base.private import private_file, restrict_files
from desktop.store import _cipher as cipher
from desktop.store._cipher import DatabaseKey
from desktop.store._migrations import MIGRATIONS, Migration

BUSY_TIMEOUT_MS = 5000
ENCRYPTED_CACHE_KIB = 65_536


def _driver() -> ModuleType:
    """sqlcipher3 (extensions and encryption everywhere), else sqlean, else stdlib sqlite3."""
    for name in ("sqlcipher3", "sqlean"):
        try:
            return importlib.import_module(name)
        except ImportError:  # pragma: no cover - sqlcipher3 is a dependency
            continue
    return importlib.import_module("sqlite3")  # pragma: no cover - chats still work


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


class Database:
    """An open database: the sqlite-utils wrapper, a lock, and explicit transactions.

    One connection is shared by the threads that call in (a UI worker, the server); the
    lock makes each public store call atomic with respect to the others.
    """

    def __init__(
        self, path: Path | None, *, synchronous: str = "NORMAL", key: DatabaseKey | None = None
    ) -> None:
        self.path = path
        self.lock = threading.RLock()
        self._synchronous = synchronous
        self._open(key)

    def _open(self, key: DatabaseKey | None) -> None:
        """Connect to the file with ``key`` (None: plaintext) and set the pragmas."""
        path, synchronous = self.path, self._synchronous
        driver = _driver() if key is None or path is None else cipher.driver()
        target = ":memory:" if path is None else str(path)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                private_file(path)  # conversations are owner-only (SQLite copies the mode)
            except OSError as exc:
                raise StoreError(f"cannot create the database {path}: {exc}") from None
        if key is not None and path is not None:
            conn = cipher.connect(path, key)  # KeyRejected when the key does not fit
        else:
            try:
                conn = driver.connect(target, check_same_thread=False, isolation_level=None)
            except driver.Error as exc:
                raise StoreError(f"cannot open the database {target}: {exc}") from None
        self.encrypted = key is not None and path is not None
        self.conn: Any = conn
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
                    "(EdgeDesk then starts an empty one) or put back a backup"
                ) from None
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: could not switch the database to WAL mode")
            # WAL/SHM files left by an older version may still be readable by others.
            restrict_files(Path(f"{path}{suffix}") for suffix in ("-wal", "-shm"))
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        # Freed pages are zeroed, so deleted conversations do not linger in the file.
        conn.execute("PRAGMA secure_delete = ON")
        if self.encrypted:
            # SQLCipher decrypts and checks every page it reads from the file: a larger
            # cache (64 MiB at most, used as needed) keeps the hot pages decrypted.
            conn.execute(f"PRAGMA cache_size = -{ENCRYPTED_CACHE_KIB}")
        self.db = sqlite_utils.Database(conn)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, object] = ()) -> Any:
        """Run one statement and return the cursor."""
        return self.conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, object] = ()) -> list[Any]:
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

    @contextmanager
    def released(self, key_after: Callable[[], DatabaseKey | None]) -> Iterator[None]:
        """The file closed for the block (every caller waits on the lock meanwhile), then
        opened again with the key ``key_after()`` gives: an encryption switch rewrites
        the file in between, and this object (held by stores and views) stays valid."""
        with self.lock:
            self.conn.close()
            try:
                yield
            finally:
                self._open(key_after())

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
    return [
        (int(v), str(n))
        for v, n in database.query("SELECT version, name FROM schema_migrations ORDER BY version")
    ]


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
            database.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
        ran.append(migration.version)
    return ran


def open_database(
    path: Path | None, *, synchronous: str = "NORMAL", key: DatabaseKey | None = None
) -> Database:
    """Open (creating if needed) and migrate the database at ``path``; None = in memory.

    With ``key`` the file is a SQLCipher one (created encrypted when it does not exist).
    """
    database = Database(path, synchronous=synchronous, key=key)
    try:
        migrate(database)
    except Exception as exc:
        database.close()
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"cannot prepare the database {path}: {exc}") from None
    return database
