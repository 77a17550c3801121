"""The database file encrypted with SQLCipher 4: opening it with a key, and converting it.

SQLCipher (through the ``sqlcipher3`` binding, wheels for Linux, Windows and macOS)
encrypts every page of the file, the WAL included, with AES-256 and authenticates each
page with HMAC-SHA512; FTS5 and the ``sqlite-vec`` extension work on it unchanged. A
raw 256-bit key skips the key derivation; a passphrase goes through SQLCipher's own
PBKDF2-HMAC-SHA512 (256,000 iterations). Whether a file is encrypted is read from its
first bytes: a plaintext SQLite file starts with ``SQLite format 3``.

Converting (``convert``) never writes over the only copy: it exports into a new file
beside the database, checks the new file row for row, and only then renames it over the
old one, so a kill at any moment leaves either the old file or the new, whole.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from desktop.base.errors import StoreError

PLAINTEXT_HEADER = b"SQLite format 3\x00"
CIPHER = "SQLCipher 4 (AES-256, HMAC-SHA512)"
FileState = Literal["missing", "plaintext", "encrypted"]
Step = Callable[[str], None]


class KeyRejected(StoreError):
    """The key given does not open this encrypted database (wrong key or passphrase)."""

    exit_code = 11
    code = "database_key_rejected"


@dataclass(frozen=True)
class DatabaseKey:
    """The secret that opens the database: 64 hex digits (a raw key) or a passphrase."""

    secret: str = ""
    passphrase: bool = False
    source: str = "keyring"  # where it came from, as `edgedesk doctor` says it

    def __repr__(self) -> str:  # a key never ends up in a log or a traceback's locals
        return f"DatabaseKey(source={self.source!r}, passphrase={self.passphrase})"

    def sql(self) -> str:
        """The key as SQLCipher's ``PRAGMA key`` / ``ATTACH ... KEY`` want it."""
        if self.passphrase:
            return self.secret
        return f"x'{self.secret}'"  # a raw key: no key derivation at each open


SQLCIPHER_KDF_ITERATIONS = 256_000  # SQLCipher 4's default for a passphrase
_SALT_BYTES = 16  # SQLCipher keeps its salt in the file's first 16 bytes


def derived_key(key: DatabaseKey, database: Path, purpose: str) -> bytes:
    """A 32-byte key for ``purpose`` (e.g. sealing the prompt cache), derived from the
    database's key with HKDF-SHA256, so it exists exactly while the database's key does.

    A raw key goes straight into HKDF. A passphrase first goes through the derivation
    SQLCipher itself runs (PBKDF2-HMAC-SHA512, 256,000 rounds, the salt at the start of
    ``database``): a guess is then as slow to check against the derived key as against
    the database. StoreError when the file cannot be read.
    """
    from cryptography.hazmat.primitives.hashes import SHA256, SHA512
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    if key.passphrase:
        try:
            with database.open("rb") as file:
                salt = file.read(_SALT_BYTES)
        except OSError as exc:
            raise StoreError(f"cannot read the database {database}: {exc}") from None
        if len(salt) != _SALT_BYTES:
            raise StoreError(f"the encrypted database {database} is empty or cut short")
        secret = PBKDF2HMAC(
            algorithm=SHA512(), length=32, salt=salt, iterations=SQLCIPHER_KDF_ITERATIONS
        ).derive(key.secret.encode("utf-8"))
    else:
        secret = bytes.fromhex(key.secret)
    info = f"edgedesk {purpose} v1".encode()
    return HKDF(algorithm=SHA256(), length=32, salt=None, info=info).derive(secret)


def file_state(path: Path) -> FileState:
    """Whether the database file is missing (or empty), plaintext SQLite or encrypted."""
    try:
        with path.open("rb") as file:
            head = file.read(len(PLAINTEXT_HEADER))
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        raise StoreError(f"cannot read the database {path}: {exc}") from None
    if not head:
        return "missing"
    return "plaintext" if head == PLAINTEXT_HEADER else "encrypted"


def driver() -> ModuleType:
    """The SQLCipher DB-API module (``sqlcipher3``); StoreError if it is not installed."""
    try:
        return importlib.import_module("sqlcipher3")
    except ImportError:
        raise StoreError(
            "encryption needs the 'sqlcipher3' package, which is not installed; reinstall EdgeDesk"
        ) from None


def cipher_version() -> str:
    """SQLCipher's version, e.g. ``4.19.0 community``."""
    conn = driver().connect(":memory:")
    try:
        return str(conn.execute("PRAGMA cipher_version").fetchone()[0])
    finally:
        conn.close()


def connect(path: Path | str, key: DatabaseKey | None) -> Any:
    """A SQLCipher connection to ``path``, keyed (None: a plaintext file), key checked.

    Raises KeyRejected when the key does not open the file.
    """
    sqlcipher = driver()
    try:
        conn = sqlcipher.connect(str(path), check_same_thread=False, isolation_level=None)
    except sqlcipher.Error as exc:
        raise StoreError(f"cannot open the database {path}: {exc}") from None
    # SQLCipher would print a wrong key's HMAC failures to stderr; the error says it all.
    conn.execute("PRAGMA cipher_log_level = NONE")
    if key is not None:
        conn.execute("PRAGMA key = " + _quoted(key.sql()))
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlcipher.DatabaseError:
        conn.close()
        if key is None:
            raise StoreError(f"{path} is not a readable EdgeDesk database") from None
        raise KeyRejected(
            f"the key from {key.source} does not open the encrypted database "
            f"{path}; nothing was changed"
        ) from None
    return conn


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _load_vec(conn: Any) -> None:
    """sqlite-vec in ``conn``: exporting a ``vec0`` table runs its CREATE statement."""
    import sqlite_vec

    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)


def _counts(conn: Any) -> dict[str, int]:
    """Rows per stored table (virtual tables are counted through their shadow tables)."""
    names = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND rootpage > 0 "
            "AND name NOT LIKE 'sqlite_%'"
        )
    ]
    # Names come from sqlite_master, quoted; not user input.
    return {
        name: int(
            conn.execute('SELECT count(*) FROM "' + name.replace('"', '""') + '"').fetchone()[0]  # noqa: S608
        )
        for name in names
    }


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError):  # folders cannot be opened on Windows
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def sidecars(path: Path) -> list[Path]:
    """The WAL, shared-memory and journal files SQLite keeps beside ``path``."""
    return [Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal")]


def convert(
    path: Path,
    *,
    source: DatabaseKey | None,
    target: DatabaseKey | None,
    step: Step = lambda name: None,
) -> None:
    """Rewrite the database at ``path`` from key ``source`` to key ``target`` (None: plain).

    Through ``PATH.new``: exported, verified (integrity and rows per table), synced, then
    renamed over ``path``. The old file stays whole until the rename; a leftover ``.new``
    from a killed run is discarded and the export redone. ``step`` is told each stage
    (``exported``, ``verified``, ``renamed``). The caller must hold the data folder so
    no other connection has the file open.
    """
    new = Path(f"{path}.new")
    for leftover in (new, *sidecars(new)):
        leftover.unlink(missing_ok=True)
    conn = connect(path, source)
    try:
        _load_vec(conn)
        # Everything in the WAL goes into the file first, so the export sees it all.
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = _counts(conn)
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        conn.execute(
            "ATTACH DATABASE ? AS target KEY ?", (str(new), "" if target is None else target.sql())
        )
        conn.execute("SELECT sqlcipher_export('target')")
        conn.execute(f"PRAGMA target.user_version = {version}")
        conn.execute("DETACH DATABASE target")
    finally:
        conn.close()
    step("exported")
    check = connect(new, target)
    try:
        _load_vec(check)
        ok = str(check.execute("PRAGMA quick_check").fetchone()[0])
        after = _counts(check)
    finally:
        check.close()
    if ok != "ok" or after != before:
        new.unlink(missing_ok=True)
        raise StoreError(
            f"the converted copy of {path} did not match it ({ok}); nothing "
            "was changed, the database is as it was"
        )
    _fsync(new)
    step("verified")
    # The old file's WAL was checkpointed and emptied; a stale one must never be
    # replayed into the new file (and may hold plaintext).
    for stale in sidecars(path):
        stale.unlink(missing_ok=True)
    os.replace(new, path)
    _fsync(path.parent)
    step("renamed")
