"""The encryption switch's rules, without an AppContext: the lock, policy, the passphrase."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop.base.errors import ConfigError
from desktop.datafolder import (
    DataFolderLock,
    check_passphrase,
    data_alone,
    settled_key,
    switch_open,
)
from desktop.store import _cipher as cipher
from desktop.store._atrest import AtRest
from desktop.store._cipher import KeyRejected
from desktop.store._db import open_database

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")


@posix_only
def test_data_alone_refuses_while_another_edgedesk_shares_the_folder(tmp_path: Path) -> None:
    ours, theirs = DataFolderLock(tmp_path), DataFolderLock(tmp_path)
    ours.share()
    theirs.share()  # another window or server on the same data folder
    with pytest.raises(ConfigError, match="another EdgeDesk"), data_alone(ours):
        pytest.fail("the block ran while another process used the data")
    theirs.release()
    ran = False
    with data_alone(ours):
        ran = True
        assert not theirs.try_exclusive()  # ours alone: nobody else gets in meanwhile
    assert ran
    theirs.share()  # shared again after the block: the other process may come back
    assert not ours.try_exclusive()


def test_decrypting_under_policy_is_refused_before_anything_is_touched(tmp_path: Path) -> None:
    path = tmp_path / "edgedesk.db"
    db = open_database(path)
    db.close()
    lock = DataFolderLock(tmp_path)
    with pytest.raises(ConfigError, match="EncryptAtRest"):
        switch_open(
            AtRest(path),
            False,
            required=True,
            open_dbs=[],
            new_key=lambda: pytest.fail("no database may be reopened"),
            lock=lock,
        )
    assert cipher.file_state(path) == "plaintext"


def test_switch_reopens_each_open_database_with_the_new_key(tmp_path: Path) -> None:
    path = tmp_path / "edgedesk.db"
    db = open_database(path)
    db.execute("INSERT INTO conversations (title, created, updated) VALUES ('kept', 0, 0)")
    at_rest = AtRest(path)
    keys: list[cipher.DatabaseKey | None] = []

    def new_key() -> cipher.DatabaseKey | None:
        keys.append(AtRest(path, passphrase="correct horse").key())
        return keys[-1]

    switch_open(
        at_rest,
        True,
        required=False,
        open_dbs=[db],
        new_key=new_key,
        lock=None,
        passphrase="correct horse",
    )
    assert cipher.file_state(path) == "encrypted"
    assert len(keys) == 1 and keys[0] is not None
    assert db.encrypted and db.query("SELECT title FROM conversations")[0][0] == "kept"
    check_passphrase(path, "correct horse")
    with pytest.raises(KeyRejected):
        check_passphrase(path, "wrong horse")
    db.close()


def test_settled_key_leaves_a_plaintext_database_alone_when_encryption_is_off(
    tmp_path: Path,
) -> None:
    path = tmp_path / "edgedesk.db"
    open_database(path).close()
    assert settled_key(AtRest(path), False, DataFolderLock(tmp_path)) is None
    assert cipher.file_state(path) == "plaintext"
