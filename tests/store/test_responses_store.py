"""Stored Responses API responses: kept, expired by retention, deleted by ``chats rm --all``."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.audit import AuditLog
from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest
from desktop.cli import main
from desktop.root.context import build_context
from desktop.store._chats import ChatStore
from desktop.store._responses import DAY_S, EPHEMERAL_ONLY, ResponseStore

pytestmark = pytest.mark.fast

RESPONSE = {"id": "resp_1", "object": "response", "output": [{"type": "message"}]}
ITEMS = [{"role": "user", "content": "hi"}, {"type": "message"}]


def test_kept_read_back_and_deleted(tmp_path: Path) -> None:
    chats = ChatStore(tmp_path / "db.sqlite")
    store = ResponseStore.over(chats)
    store.put("resp_1", "m", RESPONSE, ITEMS)
    found = store.get("resp_1")
    assert found is not None and (found.response, found.items) == (RESPONSE, ITEMS)
    assert store.get("resp_other") is None
    assert store.delete("resp_1") and not store.delete("resp_1")
    assert store.get("resp_1") is None
    chats.close()


def test_each_key_sees_only_its_own_responses(tmp_path: Path) -> None:
    chats = ChatStore(tmp_path / "db.sqlite")
    store = ResponseStore.over(chats)
    store.put("resp_1", "m", RESPONSE, ITEMS, owner="codex")
    assert store.get("resp_1", owner="codex") is not None
    assert store.get("resp_1", owner="vscode") is None and store.get("resp_1") is None
    assert not store.delete("resp_1", owner="vscode")
    assert store.delete("resp_1", owner="codex")
    chats.close()


def test_retention_deletes_only_old_responses(tmp_path: Path) -> None:
    now = [1_000_000.0]
    chats = ChatStore(tmp_path / "db.sqlite")
    store = ResponseStore.over(chats, clock=lambda: now[0])
    store.put("resp_old", "m", RESPONSE, ITEMS)
    now[0] += 31 * DAY_S
    store.put("resp_new", "m", RESPONSE, ITEMS)
    assert store.apply_retention(30) == 1
    assert store.get("resp_old") is None and store.get("resp_new") is not None
    assert store.apply_retention(None) == 0
    with pytest.raises(InvalidRequest):
        store.apply_retention(0)
    chats.close()


def test_ephemeral_only_keeps_nothing_and_says_why(tmp_path: Path) -> None:
    store = ResponseStore.over(ChatStore(tmp_path / "db.sqlite", ephemeral_only=True))
    assert not store.enabled and store.refusal == EPHEMERAL_ONLY
    with pytest.raises(InvalidRequest, match="EphemeralOnly") as caught:
        store.put("resp_1", "m", RESPONSE, ITEMS)
    assert caught.value.param == "store"
    assert not (tmp_path / "db.sqlite").exists()


def test_chats_rm_all_and_maintenance_delete_stored_responses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ctx = build_context()
    ctx.response_store.put("resp_1", "m", RESPONSE, ITEMS)
    ctx.close()
    assert main(["chats", "rm", "--all"]) == 0
    assert "deleted 1 stored API responses" in capsys.readouterr().out
    ctx = build_context(cli_settings={"retention_days": 30})
    assert ctx.response_store.get("resp_1") is None
    ctx.response_store.put("resp_2", "m", RESPONSE, ITEMS)
    long_ago = ChatStore(ctx.paths.database)
    ResponseStore.over(long_ago, clock=lambda: 0.0).put("resp_3", "m", RESPONSE, ITEMS)
    long_ago.close()
    report = ctx.maintenance()
    assert report.responses_deleted == 1
    assert ctx.response_store.get("resp_3") is None
    assert ctx.response_store.get("resp_2") is not None
    ctx.close()


def test_chats_rm_all_audits_both_counts(capsys: pytest.CaptureFixture[str]) -> None:
    settings = Paths.from_env().settings_file
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("audit_log = true\n", encoding="utf-8")
    ctx = build_context()
    for i in range(30):  # what an API client kept; the window shows none of them
        ctx.response_store.put(f"resp_{i}", "m", RESPONSE, ITEMS)
    ctx.chat_store.create_conversation("one the window shows", "m")
    folder = ctx.paths.log_dir / "audit"
    ctx.close()
    assert main(["chats", "rm", "--all"]) == 0
    out = capsys.readouterr().out
    assert "deleted 1 conversations" in out and "deleted 30 stored API responses" in out
    [line] = [e for e in AuditLog(folder).entries() if e["event"] == "chats.deleted"]
    assert (line["conversations"], line["responses"], line["all"]) == (1, 30, True)
