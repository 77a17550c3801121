"""Exports and deletions made in the window reach the audit log, as the commands' do:
one content-free line each, and `edgedesk audit verify` finds the chain intact."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.base.audit import AuditLog
from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.store._chat_records import ChatMessage
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt
ROOT = Path(__file__).resolve().parents[3]


def test_window_exports_and_deletions_are_audited(
    qtbot,
    edgedesk_home: Path,  # type: ignore[no-untyped-def]
    tiny_embed: Path,
    tmp_path: Path,
) -> None:
    config = edgedesk_home / "config"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(
        f'audit_log = true\nembedding_model = "{tiny_embed}"\n', encoding="utf-8"
    )
    ctx = build_context(policy=NoPolicy())
    conv = ctx.chat_store.create_conversation("Patient Zebra", "m")
    ctx.chat_store.add_message(conv.id, ChatMessage("user", "secretdiagnosis"))
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("Staff get 25 days of paid leave a year.\n")
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    [chat] = [c for c in win.chat.chats.chats() if c.store_id == conv.id]

    assert win.chat.sidebar.export_to(str(tmp_path / "zebra.json"), conv.id, as_json=True)
    win.chat.select(chat)
    win.chat.delete_current()
    assert conv.id not in {c.id for c in ctx.chat_store.list_conversations()}
    view = win.documents
    with qtbot.waitSignal(view.indexing_finished, timeout=30_000):
        view.add("handbook", [docs])
    qtbot.waitUntil(lambda: not view.is_indexing, timeout=30_000)
    view.remove_button.click()
    assert view.names() == []

    log = AuditLog(ctx.paths.log_dir / "audit")
    events = log.entries()
    assert [e["event"] for e in events] == ["chats.exported", "chats.deleted", "collection.removed"]
    assert events[0]["format"] == "json" and events[0]["conversations"] == 1
    assert events[1]["ids"] == [conv.id] and events[2]["collection"] == "handbook"
    assert all(e["source"] == "window" for e in events)
    text = "".join(p.read_text(encoding="utf-8") for p in log.files())
    assert "Zebra" not in text and "secretdiagnosis" not in text and "paid leave" not in text
    win.close()
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "audit", "verify"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=os.environ,
    )
    assert done.returncode == 0 and "intact: 3 lines" in done.stdout, done.stdout
