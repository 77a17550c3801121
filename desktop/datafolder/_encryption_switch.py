"""Switching the database's encryption while this process has it open.

The rules the composition root applies around ``AtRest`` (``desktop.store._atrest``): a
conversion runs with this process alone on the data folder, every open connection is
closed for it and opened again with the new key, policy EncryptAtRest forbids turning it
off, and a passphrase is checked against the database before it is used. ``AppContext``
(``desktop.root.context``) owns the objects and calls these with them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from desktop.base.errors import ConfigError
from desktop.datafolder._relocate import DataFolderLock
from desktop.store import AtRest, Database, DatabaseKey, connect


@contextlib.contextmanager
def data_alone(lock: DataFolderLock | None) -> Iterator[None]:
    """This process alone on the data folder for the block (a database conversion).

    ConfigError when another EdgeDesk window or server uses it; shared again after.
    ``lock`` None (a context that holds no data-folder lock) checks nothing.
    """
    if lock is not None and not lock.try_exclusive():
        raise ConfigError(
            "another EdgeDesk window or server is using your data; quit "
            "it and try again (nothing was changed)"
        )
    try:
        yield
    finally:
        if lock is not None:
            lock.share()


def settled_key(
    at_rest: AtRest, choice: bool | None, lock: DataFolderLock | None
) -> DatabaseKey | None:
    """The database's key under the EncryptAtRest ``choice`` (True: required, False: off).

    A conversion it needs first (a half-done switch, a required encryption) runs with the
    data folder held alone (``data_alone``); otherwise nothing is locked.
    """
    required, new_default = choice is True, choice is not False
    if not at_rest.needs_conversion(required=required):
        return at_rest.open_key(required=required, new_default=new_default)
    with data_alone(lock):
        return at_rest.open_key(required=required, new_default=new_default)


def check_passphrase(database: Path, passphrase: str) -> None:
    """Return when ``passphrase`` opens ``database``; KeyRejected (nothing changed) if not."""
    connect(database, DatabaseKey(passphrase, passphrase=True, source="passphrase")).close()


def switch_open(
    at_rest: AtRest,
    encrypt: bool,
    *,
    required: bool,
    open_dbs: Sequence[Database],
    new_key: Callable[[], DatabaseKey | None],
    lock: DataFolderLock | None,
    passphrase: str | None = None,
    step: Callable[[str], None] = lambda name: None,
) -> None:
    """Encrypt (a keyring key, or ``passphrase``) or decrypt the database in place.

    Each of ``open_dbs`` is closed for the switch (its callers wait) and opened again
    with ``new_key()``. ConfigError, the database unchanged, when ``required`` (policy
    EncryptAtRest) forbids decrypting or another EdgeDesk uses the data folder.
    """
    if not encrypt and required:
        raise ConfigError(
            "your organization requires encrypted data (policy EncryptAtRest); nothing was changed"
        )
    with data_alone(lock), contextlib.ExitStack() as released:
        for db in open_dbs:
            released.enter_context(db.released(new_key))
        if encrypt:
            at_rest.encrypt(passphrase=passphrase, step=step)
        else:
            at_rest.decrypt(step=step)
