"""Running the real ``edgedesk`` command the way a user does, and checking what they see."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def edgedesk(
    *args: str | bytes | os.PathLike[str],
    home: Path | None = None,
    stdin: str | None = None,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m desktop ARGS`` with ``EDGEDESK_HOME`` (default: the test's)."""
    environ = dict(os.environ)
    if home is not None:
        environ["EDGEDESK_HOME"] = str(home)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
        env=environ,
        input=stdin,
        check=False,
        cwd=cwd,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def assert_clean(result: subprocess.CompletedProcess[str], *, failed: bool | None = None) -> None:
    """No traceback on screen; with ``failed``, the exit code says so (one error line)."""
    shown = result.stdout + result.stderr
    assert "Traceback" not in shown, shown
    assert result.returncode >= 0, f"killed by signal {-result.returncode}: {shown}"
    if failed is True:
        assert result.returncode != 0, shown
        assert result.stderr.strip(), "a failure must say why"
    elif failed is False:
        assert result.returncode == 0, shown


def integrity_ok(home: Path) -> None:
    """The database (if one was made) passes SQLite's own integrity check."""
    for database in home.rglob("edgedesk.db"):
        with sqlite3.connect(database) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
