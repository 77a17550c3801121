"""Conversations and documents are the owner's alone: folders 0700, files 0600 (POSIX)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.root.context import build_context
from desktop.store._db import open_database

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def lax_umask() -> Iterator[None]:
    """The common default (022), as a freshly started process has it."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_fresh_start_creates_owner_only_folders_and_database(edgedesk_home: Path) -> None:
    # A real process, as a user starts it: its umask is the shell's (022 here).
    env = {**os.environ, "EDGEDESK_HOME": str(edgedesk_home)}
    export = edgedesk_home.parent / "out.json"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.umask(0o022); "
            "from desktop.cli import main; raise SystemExit(main("
            "['chats', 'export', '--format', 'json', '-o', sys.argv[1]]))",
            str(export),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for folder in ("data", "logs", "config", "cache"):
        assert _mode(edgedesk_home / folder) == 0o700, folder
    database = edgedesk_home / "data" / "edgedesk.db"
    assert _mode(database) == 0o600
    for sidecar in (Path(f"{database}-wal"), Path(f"{database}-shm")):
        assert not sidecar.exists() or _mode(sidecar) == 0o600
    assert _mode(export) == 0o600  # the export, too


def test_data_left_readable_by_an_older_version_is_repaired_at_start(
    edgedesk_home: Path, lax_umask: None
) -> None:
    data = edgedesk_home / "data"
    (data / "indexes").mkdir(parents=True)
    (edgedesk_home / "logs").mkdir()
    for path in (
        data / "edgedesk.db",
        data / "edgedesk.db-wal",
        data / "indexes" / "x.bin",
        edgedesk_home / "logs" / "access.log",
    ):
        path.write_bytes(b"")
        path.chmod(0o644)
    for folder in (data, data / "indexes", edgedesk_home / "logs"):
        folder.chmod(0o755)
    ctx = build_context(environ={"EDGEDESK_HOME": str(edgedesk_home)})
    ctx.close()
    assert _mode(data) == 0o700 and _mode(data / "indexes") == 0o700
    assert _mode(edgedesk_home / "logs") == 0o700
    assert _mode(data / "indexes" / "x.bin") == 0o600
    assert _mode(edgedesk_home / "logs" / "access.log") == 0o600
    assert _mode(data / "edgedesk.db") == 0o600 and _mode(data / "edgedesk.db-wal") == 0o600


def test_the_database_and_its_wal_are_owner_only_even_under_a_lax_umask(
    tmp_path: Path, lax_umask: None
) -> None:
    path = tmp_path / "chats.db"
    database = open_database(path)
    try:
        database.execute("CREATE TABLE t (x)")
        database.execute("INSERT INTO t VALUES ('secret')")
        assert _mode(path) == 0o600
        wal = Path(f"{path}-wal")
        assert wal.exists() and _mode(wal) == 0o600
    finally:
        database.close()
