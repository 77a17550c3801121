"""Rows 7, 8 and 9, and ``chats import``: the conversations survive whatever is typed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.store._chat_records import ChatMessage
from tests.robustness.cli import assert_clean, edgedesk, integrity_ok


def _saved_chats(*titles: str) -> list[int]:
    ctx = build_context(environ=dict(os.environ), policy=NoPolicy())
    ids = []
    for title in titles:
        conv = ctx.chat_store.create_conversation(title)
        ctx.chat_store.add_message(conv.id, ChatMessage("user", f"notes about {title}"))
        ids.append(conv.id)
    ctx.close()
    ctx.data_lock.release()
    return ids


def _titles() -> list[str]:
    listing = edgedesk("chats", "list", "--json")
    assert_clean(listing, failed=False)
    return sorted(c["title"] for c in json.loads(listing.stdout))


@pytest.mark.parametrize("ids", [["3", "999"], ["999", "1"], ["2", "2", "99999"]])
def test_rm_with_one_unknown_id_deletes_nothing(ids: list[str]) -> None:
    _saved_chats("alpha", "beta", "gamma")
    result = edgedesk("chats", "rm", *ids)
    assert_clean(result, failed=True)
    assert "nothing was deleted" in result.stderr
    assert _titles() == ["alpha", "beta", "gamma"]


def test_rm_of_a_repeated_id_deletes_it_once_and_says_so() -> None:
    first, _ = _saved_chats("alpha", "beta")
    result = edgedesk("chats", "rm", str(first), str(first))
    assert_clean(result, failed=False)
    assert "deleted 1 conversation" in result.stdout
    assert _titles() == ["beta"]


@pytest.mark.parametrize("verb", ["rm", "export"])
@pytest.mark.parametrize("bad", ["99999999999999999999999", "-5", "0", "x1"])
def test_ids_no_conversation_can_have_are_refused_in_one_line(
    verb: str, bad: str, edgedesk_home: Path
) -> None:
    _saved_chats("alpha")
    result = (
        edgedesk("chats", verb, "--", bad) if bad.startswith("-") else edgedesk("chats", verb, bad)
    )
    assert_clean(result, failed=True)
    assert result.returncode == 2
    assert _titles() == ["alpha"]
    integrity_ok(edgedesk_home)


def test_export_to_a_folder_or_a_missing_folder_is_explained(tmp_path: Path) -> None:
    _saved_chats("alpha")
    into_folder = edgedesk("chats", "export", "-o", str(tmp_path))
    assert_clean(into_folder, failed=True)
    assert "is a folder; name a file" in into_folder.stderr
    missing = edgedesk("chats", "export", "-o", str(tmp_path / "nope" / "out.md"))
    assert_clean(missing, failed=True)
    assert "does not exist" in missing.stderr
    assert not (tmp_path / "nope").exists()


def test_export_to_a_full_disk_is_one_line() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("this system has no /dev/full")
    _saved_chats("alpha")
    result = edgedesk("chats", "export", "-o", "/dev/full")
    assert_clean(result, failed=True)
    assert "No space left on device" in result.stderr


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs file permissions that apply (not root)"
)
def test_export_into_a_read_only_folder_keeps_the_old_export(tmp_path: Path) -> None:
    _saved_chats("alpha")
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "out.md").write_text("previous export")
    folder.chmod(0o500)
    try:
        result = edgedesk("chats", "export", "-o", str(folder / "out.md"))
    finally:
        folder.chmod(0o700)
    assert_clean(result, failed=True)
    assert "Permission denied" in result.stderr
    assert (folder / "out.md").read_text() == "previous export"


def test_export_then_import_adds_the_conversations_back(tmp_path: Path) -> None:
    _saved_chats("alpha", "beta")
    out = tmp_path / "all.json"
    assert_clean(edgedesk("chats", "export", "--format", "json", "-o", str(out)), failed=False)
    imported = edgedesk("chats", "import", str(out))
    assert_clean(imported, failed=False)
    assert "imported 2 conversation(s)" in imported.stdout
    assert _titles() == ["alpha", "alpha", "beta", "beta"]
    from_stdin = edgedesk("chats", "import", "-", stdin=out.read_text())
    assert_clean(from_stdin, failed=False)
    assert len(_titles()) == 6


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe not text",
        b"[]",
        b'{"conversations": [{"title": "\\ud800"}]}',
        b'{"conversations": [{"title": "t", "created": 1e999999}]}',
        b'{"conversations": [{"title": "t", "messages": [{"role": "user", "content": "x", '
        b'"prompt_tokens": 99999999999999999999999}]}]}',
        b"[" * 100_000,
    ],
)
def test_import_of_a_damaged_file_adds_nothing(
    tmp_path: Path, content: bytes, edgedesk_home: Path
) -> None:
    _saved_chats("alpha")
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    result = edgedesk("chats", "import", str(bad))
    assert_clean(result, failed=True)
    assert "not an EdgeDesk conversation export" in result.stderr
    assert _titles() == ["alpha"]
    integrity_ok(edgedesk_home)


def test_list_search_without_a_match_says_nothing_matched() -> None:
    _saved_chats("alpha")
    result = edgedesk("chats", "list", "--search", "*")
    assert_clean(result, failed=False)
    assert "no conversation matches '*'" in result.stdout
