"""Files that move while ``edgedesk docs`` reads them: every indexed file is opened by
handle, following no link below its folder, and checked once open (issue 48, item 4).

Real swaps on disk at the exact moment between the folder check and the read (through
a function the indexer calls there), a collection root replaced by a link, and a hard
link to a file outside; the real CLI, the tiny embedding model, real SQLite.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.cli import main
from desktop.retrieval import _handles as handles
from desktop.retrieval import _loaders as loaders

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")

SECRET = "The zanzibar vault code is 4417."


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """An indexed folder (a file at its top, one in a sub-folder) and a private one
    beside it holding the secret under the same names."""
    outside = tmp_path / "private"
    (outside / "sub").mkdir(parents=True)
    for name in ("notes.txt", "sub/deep.txt"):
        (outside / name).write_text(SECRET + "\n", encoding="utf-8")
    root = tmp_path / "shared"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("Penguins swim in cold water.\n", encoding="utf-8")
    (root / "sub" / "deep.txt").write_text("Walruses rest on ice.\n", encoding="utf-8")
    return root, outside


def _add(root: Path, tiny_embed: Path) -> int:
    return main(
        ["docs", "add", str(root), "--collection", "shared", "--embedding-model", str(tiny_embed)]
    )


def _indexed_texts() -> str:
    with sqlite3.connect(Paths.from_env().database) as conn:
        text = "\n".join(r[0] for r in conn.execute("SELECT text FROM chunks"))
    conn.close()
    return text


def _nowhere_in_home(home: Path, word: str) -> list[str]:
    return [str(p) for p in home.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


def _once(action: Callable[[], None]) -> Callable[[], None]:
    done: list[bool] = []

    def run() -> None:
        if not done:
            done.append(True)
            action()

    return run


def test_a_file_swapped_for_a_link_after_the_folder_check_is_not_read(
    layout: tuple[Path, Path],
    tiny_embed: Path,
    edgedesk_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, outside = layout
    notes = root / "notes.txt"

    def swap() -> None:  # what a sync client or another local process can do
        notes.unlink()
        notes.symlink_to(outside / "notes.txt")

    swap_once = _once(swap)
    real_check = loaders.check_type

    def check_type(path: Path) -> None:
        # The indexer calls this after its folder check and before it opens the file.
        if path.name == "notes.txt":
            swap_once()
            assert notes.is_symlink()  # the swap really happened on disk
        real_check(path)

    monkeypatch.setattr(loaders, "check_type", check_type)
    assert _add(root, tiny_embed) == 0
    out = capsys.readouterr().out
    assert f"skipped {notes}: links outside the indexed folder" in out
    assert "zanzibar" not in _indexed_texts()
    assert main(["docs", "search", "zanzibar vault code", "-k", "10"]) == 0
    assert "zanzibar" not in capsys.readouterr().out
    assert _nowhere_in_home(edgedesk_home, "zanzibar") == []


@pytest.mark.parametrize("by_handle", [True, False], ids=["openat", "checked-fallback"])
def test_a_folder_swapped_for_a_link_while_the_file_opens_is_refused(
    layout: tuple[Path, Path],
    tiny_embed: Path,
    edgedesk_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    by_handle: bool,
) -> None:
    # The narrowest gap: the path was resolved and found inside; before the open, the
    # folder above the file becomes a link to the private folder. Opened name by name
    # from the root without following links, the file is refused, not read; where the
    # system has no such opens (Windows), the handle is checked against the path after
    # the open, and refused too.
    if by_handle and not handles.BY_HANDLE:
        pytest.skip("no dir_fd opens with O_NOFOLLOW here")
    monkeypatch.setattr(handles, "BY_HANDLE", by_handle)
    if not by_handle:  # as on Windows: no /proc to ask where the handle is either
        monkeypatch.setattr(handles, "_PROC_FD", Path("/no/proc/here"))
    root, outside = layout
    deep = root / "sub" / "deep.txt"

    def swap() -> None:
        (root / "sub").rename(root / "sub-before")
        (root / "sub").symlink_to(outside / "sub", target_is_directory=True)

    swap_once = _once(swap)
    real_root_of = handles.root_of

    def root_of(target: str, roots: list[str]) -> str | None:
        found = real_root_of(target, roots)
        if target == str(deep):
            swap_once()
        return found

    monkeypatch.setattr(handles, "root_of", root_of)
    assert _add(root, tiny_embed) == 0
    out = capsys.readouterr().out
    assert f"skipped {deep}: it changed while being read" in out
    assert "Penguins" in _indexed_texts() and "zanzibar" not in _indexed_texts()
    assert _nowhere_in_home(edgedesk_home, "zanzibar") == []


def test_a_root_replaced_by_a_link_is_refused_not_followed(
    layout: tuple[Path, Path],
    tiny_embed: Path,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, outside = layout
    assert _add(root, tiny_embed) == 0
    capsys.readouterr()
    root.rename(root.with_name("shared-before"))
    root.symlink_to(outside, target_is_directory=True)
    # Adding it again used to resolve the link and index the private folder as a new root.
    assert _add(root, tiny_embed) == 2
    err = capsys.readouterr().err
    assert "this indexed folder is now a link" in err and "refused" in err
    assert main(["docs", "list", "--json"]) == 0
    import json

    [info] = json.loads(capsys.readouterr().out)
    assert info["roots"] == [str(root)]
    # The scan the window or the server runs refuses it too, and reads nothing there.
    from desktop.root.context import build_context

    ctx = build_context()
    try:
        report = ctx.library.rescan("shared")
        [info] = ctx.library.collections()
    finally:
        ctx.close()
    [refused] = report.refused
    assert refused.path == str(root) and "this indexed folder is now a link" in refused.reason
    assert not report.skipped and report.added == 0 and report.removed == 2
    assert [s.path for s in info.skipped] == [str(root)]  # listed in the window
    assert "zanzibar" not in _indexed_texts()
    assert _nowhere_in_home(edgedesk_home, "zanzibar") == []


@pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links here")
def test_a_hard_link_to_a_file_outside_is_skipped_unless_allowed(
    layout: tuple[Path, Path],
    tiny_embed: Path,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, outside = layout
    linked = root / "linked.txt"
    os.link(outside / "notes.txt", linked)  # no symlink to follow: a second name
    assert _add(root, tiny_embed) == 0
    out = capsys.readouterr().out
    assert f"skipped {linked}: has 2 hard links" in out
    assert "documents.allow_hard_links" in out
    assert "zanzibar" not in _indexed_texts()
    assert _nowhere_in_home(edgedesk_home, "zanzibar") == []

    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("[documents]\nallow_hard_links = true\n", encoding="utf-8")
    assert _add(root, tiny_embed) == 0  # the owner's choice: such files are indexed
    assert "1 added" in capsys.readouterr().out
    assert "zanzibar" in _indexed_texts()


def test_a_file_swapped_after_indexing_is_not_handed_out(
    layout: tuple[Path, Path], tiny_embed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Read time: the passage is served from the index only while its file still opens,
    # by handle, inside the folder; a folder above it swapped for a link hides it.
    root, outside = layout
    assert _add(root, tiny_embed) == 0
    assert main(["docs", "search", "walruses rest on ice", "-k", "10"]) == 0
    assert "Walruses" in capsys.readouterr().out
    (root / "sub").rename(root / "sub-before")
    (root / "sub").symlink_to(outside / "sub", target_is_directory=True)
    assert main(["docs", "search", "walruses rest on ice", "-k", "10"]) == 0
    assert "Walruses" not in capsys.readouterr().out
