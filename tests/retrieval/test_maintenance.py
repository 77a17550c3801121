"""The periodic maintenance pass: retention and document rescans without a restart."""

from __future__ import annotations

import time
from pathlib import Path

from desktop.retrieval._indexer import Library
from desktop.root.context import AppContext, build_context
from desktop.store._chats import ChatStore

DAY_S = 86_400


def test_maintenance_applies_retention_and_picks_up_edited_files(
    library: Library, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("Walruses sleep on ice floes.\n", encoding="utf-8")
    library.add("notes", [folder])
    ctx = build_context(cli_settings={"retention_days": 30})
    AppContext.library.of(ctx).set(library)  # the tiny test embedder, not a catalog BGE
    ctx.chat_store.create_conversation("today")  # opened first: its start-up pass is done
    old_clock = ChatStore(ctx.paths.database, clock=lambda: time.time() - 40 * DAY_S)
    old_clock.create_conversation("last month")  # as if written 40 days ago
    old_clock.close()
    (folder / "b.txt").write_text("Pelicans fish in the bay.\n", encoding="utf-8")
    (folder / "a.txt").unlink()
    report = ctx.maintenance()
    assert report.failures == {}
    assert report.conversations_deleted == 1
    assert [c.title for c in ctx.chat_store.list_conversations()] == ["today"]
    assert (report.rescanned[0].added, report.rescanned[0].removed) == (1, 1)
    ctx.close()
