"""Encryption at rest: where the database's key lives, turning it on and off, recovery.

The key is 256 random bits kept in the OS keyring (``keyring``), never in a file beside
the data; the only file beside the database, ``edgedesk.db.key.json``, says which
keyring entry holds the key (a random id) or that a passphrase opens it, and whether
the user was offered a backup of that key (once per key), nothing secret. A passphrase
(``EDGEDESK_PASSPHRASE``, ``edgedesk unlock``) goes through SQLCipher's own key
derivation, for machines without a usable keyring. A lost keyring entry comes back from
a backup: ``export_key`` (a file) or ``recovery_code`` (written down), ``import_key``.

Switching (``encrypt``/``decrypt``) first writes ``edgedesk.db.converting.json`` (the
target and the key's id), then converts the file through a new one and a rename
(``desktop.store._cipher.convert``); a run killed at any point is finished by the next
``resume`` (every start does it), and the old file stays until the new one verified.
"""

from __future__ import annotations

import json
import os
import secrets
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from desktop.base.audit import Auditor, NoAudit
from desktop.base.errors import ConfigError, EdgeDeskError, InvalidRequest, StoreError
from desktop.base.keychain import Keychain
from desktop.base.private import private_file
from desktop.store import _cipher as cipher
from desktop.store import _recovery_code as recovery_code
from desktop.store._cipher import DatabaseKey, Step

KEYRING_SERVICE = "EdgeDesk database key"
# Through ``Keychain``: a keyring backend that cannot load is "no keyring" here as well.
_RING = Keychain(KEYRING_SERVICE, "database key")
PASSPHRASE_ENV = "EDGEDESK_PASSPHRASE"  # noqa: S105 - a variable name, not a secret
EXPORT_HEADER = "edgedesk-database-key-v1"
EXIT_KEY = 11  # the database is encrypted and what we have does not open it
NEW_KEY_NOTE = (
    "your conversations and documents are now encrypted with a key kept only in this "
    "user's OS keyring; if that entry is ever lost, only a backup of the key opens them: "
    "'edgedesk data export-key --code' prints a recovery code to write down (said once)"
)


class KeyMissing(StoreError):
    """The database is encrypted and its key is not available; nothing was changed."""

    exit_code = EXIT_KEY
    code = "database_key_missing"


class NoKeyring(ConfigError):
    """No usable OS keyring keeps a new key here; a passphrase is the way on. Nothing changed."""

    code = "no_keyring"


def _no_step(name: str) -> None:
    """A ``Step`` that ignores the stages."""


def ring_get(key_id: str) -> str | None:
    """The key stored under ``key_id`` in the OS keyring (None: none, or no usable keyring)."""
    return _RING.get(key_id)


def ring_set(key_id: str, secret: str) -> bool:
    """Store a key in the OS keyring; False when no keyring keeps it (read back to check)."""
    try:
        _RING.set(key_id, secret)
    except ConfigError:
        return False
    return ring_get(key_id) == secret


def ring_delete(key_id: str) -> None:
    """Forget a key (no error when it is not there)."""
    _RING.delete(key_id)


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` to ``path`` atomically and durably (owner-only)."""
    tmp = Path(f"{path}.tmp")
    private_file(tmp)
    with tmp.open("w", encoding="utf-8") as file:
        json.dump(dict(data), file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(tmp, path)


# Any: our own small JSON files, read with .get() so a damaged one cannot crash
def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read {path}: {exc}; put back a backup of it") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path} is not an EdgeDesk key file; put back a backup of it")
    return data


class AtRest:
    """The encryption of one database file: its state, its key, switching, recovery.

    Blocking calls from one thread, by a process that holds the data folder (no other
    connection may have the file open while it is converted).
    """

    def __init__(
        self,
        database: Path,
        *,
        environ: Mapping[str, str] | None = None,
        passphrase: str | None = None,
        audit: Auditor | None = None,
        tell: Callable[[str], None] | None = None,
    ) -> None:
        self.database = database
        self.audit = audit or NoAudit()
        # Where a note for the user goes (a command: stderr), e.g. a new install's new key.
        self.tell = tell or (lambda line: None)
        self.info_path = Path(f"{database}.key.json")
        self.marker_path = Path(f"{database}.converting.json")
        env = os.environ if environ is None else environ
        self._passphrase = passphrase
        self._passphrase_source = "passphrase (edgedesk unlock)"  # noqa: S105
        if passphrase is None and env.get(PASSPHRASE_ENV):
            self._passphrase = env[PASSPHRASE_ENV]
            self._passphrase_source = f"passphrase ({PASSPHRASE_ENV})"

    # -- what is there ---------------------------------------------------------------

    def needs_passphrase(self) -> bool:
        """Whether the database is encrypted with a passphrase not given to this process."""
        info = _read_json(self.info_path) or {}
        return (
            info.get("source") == "passphrase"
            and not self._passphrase
            and self.state() == "encrypted"
        )

    def state(self) -> cipher.FileState:
        """``missing``, ``plaintext`` or ``encrypted`` (read from the file's first bytes)."""
        return cipher.file_state(self.database)

    # Any: a JSON report read by doctor and the window by key; a TypedDict would change them
    def status(self) -> dict[str, Any]:
        """What ``edgedesk doctor`` reports: encrypted yes/no, the cipher, the key's source."""
        state = self.state()
        info = _read_json(self.info_path) or {}
        encrypted = state == "encrypted" or (state == "missing" and bool(info))
        source = None
        if encrypted:
            source = (
                "passphrase"
                if info.get("source") == "passphrase"
                else ("OS keyring" if info else "unknown (key file missing)")
            )
        return {
            "database": str(self.database),
            "encrypted": encrypted,
            "cipher": cipher.CIPHER if encrypted else None,
            "key_source": source,
            "converting": self.marker_path.exists(),
        }

    def _missing(self, why: str) -> KeyMissing:
        return KeyMissing(
            f"your conversations and documents database {self.database} is encrypted and "
            f"{why}. Nothing was changed. To recover: restore the key saved earlier with "
            "'edgedesk data export-key' by running 'edgedesk data import-key FILE'; or "
            f"start fresh: move {self.database.name} and {self.info_path.name} out of "
            f"{self.database.parent} to a safe place (they open again once the key is "
            "imported) and start EdgeDesk again"
        )

    def _key_for(self, info: Mapping[str, Any]) -> DatabaseKey:
        """The key ``info`` names, from the keyring or the passphrase given; KeyMissing."""
        if info.get("source") == "passphrase":
            if not self._passphrase:
                raise KeyMissing(
                    f"{self.database} is encrypted with a passphrase; run 'edgedesk unlock' "
                    f"(it asks for it) or set {PASSPHRASE_ENV} for a server without a "
                    "terminal. Nothing was changed"
                )
            return DatabaseKey(self._passphrase, passphrase=True, source=self._passphrase_source)
        key_id = str(info.get("key_id") or "")
        secret = ring_get(key_id) if key_id else None
        if not secret:
            raise self._missing(
                f"its key (id {key_id or '?'}) is not in this user's OS "
                "keyring (a new user profile or a reset keyring)"
            )
        return DatabaseKey(secret, source="OS keyring")

    def key(self) -> DatabaseKey | None:
        """The key that opens the database now (None: plaintext); KeyMissing if unavailable."""
        state = self.state()
        info = _read_json(self.info_path)
        if state == "plaintext":
            return None
        if info is None:
            if state == "missing":
                return None
            # Not SQLite and no key named for it: a foreign or damaged file, or an
            # encrypted one whose key file was lost. Both ways out, and nothing changed.
            raise StoreError(
                f"{self.database} is not a readable EdgeDesk database (not plain SQLite, and "
                f"no {self.info_path.name} names a key for it). If it is an encrypted EdgeDesk "
                "database, restore its key with 'edgedesk data import-key FILE'; otherwise "
                "move it away (EdgeDesk then starts an empty one) or put back a backup"
            )
        try:
            return self._key_for(info)
        except KeyMissing:
            if state == "missing":  # the encrypted file was moved aside: start fresh
                self.info_path.unlink(missing_ok=True)
                return None
            raise

    # -- at every start ---------------------------------------------------------------

    def needs_conversion(self, *, required: bool) -> bool:
        """Whether ``open_key`` will rewrite the file (it then needs the data folder alone)."""
        return self.marker_path.exists() or (required and self.state() == "plaintext")

    def open_key(self, *, required: bool, new_default: bool) -> DatabaseKey | None:
        """The key for this start, after finishing an interrupted switch.

        ``required`` (policy EncryptAtRest): a plaintext database is encrypted now, or
        ConfigError says why it cannot be. ``new_default``: a new install is encrypted
        when the OS keyring works.
        """
        self.resume()
        key = self.key()
        state = self.state()
        if key is not None or state == "encrypted":
            return key
        if state == "missing" and (required or new_default):
            try:
                key = self._encrypt_somehow()
            except ConfigError:
                if required:
                    raise
                return None  # no keyring here: a new install stays plaintext
            if not key.passphrase:  # encrypted silently: say once how to keep the key
                self.tell(NEW_KEY_NOTE)
            return key
        if state == "plaintext" and required:
            try:
                return self._encrypt_somehow()
            except EdgeDeskError as exc:
                # No keyring stays NoKeyring: the window then offers a passphrase in place.
                refusal = NoKeyring if isinstance(exc, NoKeyring) else ConfigError
                raise refusal(
                    "your organization requires encrypted data (policy EncryptAtRest) and "
                    f"the plaintext database {self.database} could not be encrypted: "
                    f"{exc}. EdgeDesk will not start with it; it is unchanged"
                ) from None
        return None

    def _encrypt_somehow(self) -> DatabaseKey:
        """Encrypt with a keyring key, or with the passphrase given where no keyring works."""
        try:
            return self.encrypt()
        except ConfigError:
            if not self._passphrase:
                raise
            return self.encrypt(passphrase=self._passphrase)

    # -- switching ---------------------------------------------------------------------

    def encrypt(self, *, passphrase: str | None = None, step: Step = _no_step) -> DatabaseKey:
        """Encrypt the database (a new random key in the keyring, or ``passphrase``).

        A missing database is only set up so it is created encrypted. ConfigError when no
        keyring keeps the key (and no passphrase is given).
        """
        self.resume(step)
        if self.state() == "encrypted":
            raise InvalidRequest(f"{self.database} is already encrypted")
        if (
            passphrase is None
            and self._passphrase
            and (_read_json(self.info_path) or {}).get("source") == "passphrase"
        ):
            passphrase = self._passphrase
        if passphrase is not None:
            if not passphrase:
                raise InvalidRequest("the passphrase is empty")
            self._passphrase, self._passphrase_source = passphrase, "passphrase"
            plan: dict[str, str] = {"to": "encrypted", "source": "passphrase"}
        else:
            key_id = uuid.uuid4().hex
            if not ring_set(key_id, secrets.token_hex(32)):
                raise NoKeyring(
                    "no usable OS keyring on this machine to keep the database key in; "
                    "nothing was changed. Use a passphrase instead: 'edgedesk data encrypt "
                    "--passphrase' (asked twice), '--passphrase-stdin' for a script, or "
                    f"{PASSPHRASE_ENV} for a server"
                )
            plan = {"to": "encrypted", "source": "keyring", "key_id": key_id}
        if self.state() == "missing":
            _write_json(self.info_path, {k: v for k, v in plan.items() if k != "to"})
            self.audit.record(
                "data.encrypted", database=str(self.database), key_source=plan["source"], new=True
            )
            key = self.key()
            assert key is not None
            return key
        _write_json(self.marker_path, plan)
        step("planned")
        self.resume(step)
        key = self.key()
        assert key is not None
        return key

    def decrypt(self, *, step: Step = _no_step) -> None:
        """Turn encryption off: the database becomes plaintext again, its key forgotten."""
        self.resume(step)
        if self.state() != "encrypted":
            raise InvalidRequest(f"{self.database} is not encrypted")
        self._key_for(_read_json(self.info_path) or {})  # KeyMissing before any change
        _write_json(self.marker_path, {"to": "plaintext"})
        step("planned")
        self.resume(step)

    def resume(self, step: Step = _no_step) -> bool:
        """Finish a switch a killed run left half done; True when there was one."""
        plan = _read_json(self.marker_path)
        if plan is None:
            return False
        state = self.state()
        info = {k: v for k, v in plan.items() if k != "to"}
        if plan.get("to") == "encrypted":
            if state != "encrypted":
                target = self._key_for(info)
                # Written before the rename: once the file is encrypted, its key is named.
                _write_json(self.info_path, info)
                if state == "plaintext":
                    cipher.convert(self.database, source=None, target=target, step=step)
            _write_json(self.info_path, info)
        else:
            old = _read_json(self.info_path) or {}
            if state == "encrypted":
                cipher.convert(self.database, source=self._key_for(old), target=None, step=step)
            self.info_path.unlink(missing_ok=True)
            if old.get("key_id"):
                ring_delete(str(old["key_id"]))
        for leftover in (
            Path(f"{self.database}.new"),
            *cipher.sidecars(Path(f"{self.database}.new")),
        ):
            leftover.unlink(missing_ok=True)
        self.marker_path.unlink()
        self.audit.record(
            "data.encrypted" if plan.get("to") == "encrypted" else "data.decrypted",
            database=str(self.database),
            key_source=plan.get("source"),
        )
        step("done")
        return True

    # -- recovery ----------------------------------------------------------------------

    # Any: the key file as _read_json parsed it
    def _keyring_info(self) -> dict[str, Any]:
        """The key file of a database encrypted with a keyring key; InvalidRequest if none."""
        info = _read_json(self.info_path)
        if info is None or self.state() == "plaintext":
            raise InvalidRequest(f"{self.database} is not encrypted; there is no key to export")
        if info.get("source") == "passphrase":
            raise InvalidRequest(
                "the database is encrypted with a passphrase: the "
                "passphrase is the key, keep it safe"
            )
        return info

    def export_key(self) -> str:
        """The key as one line of text to keep somewhere safe (e.g. a password manager)."""
        info = self._keyring_info()
        key = self._key_for(info)
        self.audit.record("key.exported", database=str(self.database), key_id=str(info["key_id"]))
        return f"{EXPORT_HEADER} {info['key_id']} {key.secret}\n"

    def recovery_code(self) -> str:
        """The key as a recovery code to write down (``recovery_code``); import-key takes it."""
        info = self._keyring_info()
        key = self._key_for(info)
        self.audit.record(
            "key.exported", database=str(self.database), key_id=str(info["key_id"]), form="code"
        )
        return recovery_code.encode(key.secret)

    def backup_due(self) -> bool:
        """Whether the keyring key was never offered for backup (offered once per key)."""
        info = _read_json(self.info_path) or {}
        return (
            info.get("source") == "keyring"
            and not info.get("backup_offered")
            and self.state() != "plaintext"
            and not self.marker_path.exists()
        )

    def backup_offered(self) -> None:
        """Remember that the user was offered a backup of this key (not asked again)."""
        info = _read_json(self.info_path)
        if info is not None and info.get("source") == "keyring":
            _write_json(self.info_path, {**info, "backup_offered": True})

    def import_key(self, text: str) -> None:
        """Put an exported key or a recovery code back in the keyring (checked first)."""
        parts = text.split()
        if parts and parts[0] == EXPORT_HEADER:
            if (
                len(parts) != 3
                or len(parts[2]) != 64
                or any(c not in "0123456789abcdef" for c in parts[2])
            ):
                raise InvalidRequest("this is not a key written by 'edgedesk data export-key'")
            key_id, secret = parts[1], parts[2]
        else:
            secret = recovery_code.decode(text)  # InvalidRequest: not a code, or a typo
            # A code carries no keyring id: keep the one the key file names, if any.
            info = _read_json(self.info_path) or {}
            key_id = str(info.get("key_id") or "") or uuid.uuid4().hex
        key = DatabaseKey(secret, source="imported key")
        if self.state() == "encrypted":
            cipher.connect(self.database, key).close()  # KeyRejected: not this file's key
        if not ring_set(key_id, secret):
            raise ConfigError(
                "no usable OS keyring on this machine to keep the key in; use a passphrase instead"
            )
        # Restored from a backup: the user has one, so no offer to make one.
        _write_json(self.info_path, {"source": "keyring", "key_id": key_id, "backup_offered": True})
        self.audit.record("key.imported", database=str(self.database), key_id=key_id)
