"""Conversations removed by the retention period leave one content-free audit line each
pass (at start and in the hourly maintenance), and the chain stays intact."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from desktop.base.audit import AuditLog
from desktop.base.config import Paths
from desktop.root.context import build_context
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore

ROOT = Path(__file__).resolve().parents[2]
DAY_S = 86_400


def _old_chat(database: Path, title: str, words: str) -> None:
    old = ChatStore(database, clock=lambda: time.time() - 40 * DAY_S)
    conv = old.create_conversation(title, "m")  # as if written 40 days ago
    old.add_message(conv.id, ChatMessage("user", words))
    old.close()


def _entries(folder: Path) -> list[dict[str, object]]:
    return AuditLog(folder).entries()


def test_retention_deletions_are_audited_at_start_and_in_maintenance() -> None:
    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    # In settings.toml, so that `edgedesk audit verify` below finds the log too.
    paths.settings_file.write_text("retention_days = 30\naudit_log = true\n", encoding="utf-8")
    ctx = build_context()
    folder = ctx.paths.log_dir / "audit"
    ctx.paths.database.parent.mkdir(parents=True, exist_ok=True)
    _old_chat(ctx.paths.database, "Patient Zebra", "secretdiagnosis")
    ctx.chat_store.create_conversation("today")  # opening applies the retention period
    [started] = _entries(folder)
    assert started["event"] == "chats.deleted" and started["conversations"] == 1
    assert started["reason"] == "retention" and started["retention_days"] == 30

    _old_chat(ctx.paths.database, "Patient Yak", "othersecret")
    assert ctx.maintenance().conversations_deleted == 1
    assert ctx.maintenance().conversations_deleted == 0  # nothing went: no line
    events = _entries(folder)
    assert len(events) == 2 and events[1]["event"] == "chats.deleted"
    assert events[1]["conversations"] == 1 and events[1]["reason"] == "retention"
    ctx.close()
    text = "".join(p.read_text(encoding="utf-8") for p in AuditLog(folder).files())
    for word in ("Zebra", "Yak", "secretdiagnosis", "othersecret"):
        assert word not in text
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "audit", "verify"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=os.environ,
    )
    assert done.returncode == 0 and "intact: 2 lines" in done.stdout, done.stdout
