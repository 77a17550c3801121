"""Links in an indexed folder never lead the index (or a reader) out of it.

A synced or shared folder is enough to plant ``passwd.txt -> /etc/passwd``; an agent with
a ``--read-only-docs`` key would then read it through ``/mcp``. Real symlinks here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop.retrieval._indexer import Library
from desktop.retrieval._search import Searcher

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")

SECRET = "The zanzibar vault code is 4417."


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """An indexed folder holding links out of it (a file and a folder) and links within."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    root = tmp_path / "shared"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("Penguins swim in cold water.\n", encoding="utf-8")
    (root / "sub" / "deep.txt").write_text("Walruses rest on ice.\n", encoding="utf-8")
    (root / "passwd.txt").symlink_to(outside / "secret.txt")
    (root / "elsewhere").symlink_to(outside, target_is_directory=True)
    (root / "alias.txt").symlink_to(root / "notes.txt")  # a link inside: allowed
    (root / "sub-again").symlink_to(root / "sub", target_is_directory=True)
    return root


def test_links_out_of_the_folder_are_skipped_with_the_reason(
    library: Library, searcher: Searcher, planted: Path
) -> None:
    report = library.add("shared", [planted])
    reasons = {s.path: s.reason for s in report.skipped}
    for name in ("passwd.txt", "elsewhere"):
        assert "links outside the indexed folder" in reasons[str(planted / name)]
        assert "not followed" in reasons[str(planted / name)]
    assert str(planted / "alias.txt") not in reasons and str(planted / "sub-again") not in reasons
    assert report.added == 3  # notes.txt, alias.txt (a link within), sub/deep.txt
    [info] = library.collections()
    assert {s.path for s in info.skipped} == {
        str(planted / "passwd.txt"),
        str(planted / "elsewhere"),
    }
    texts = [h.text for h in searcher.search("zanzibar vault code", ["shared"], k=10)]
    assert texts and not any("zanzibar" in t for t in texts)
    assert any("Walruses" in t for t in texts) or any("Penguins" in t for t in texts)


def test_a_file_swapped_for_a_link_out_is_not_read_after_indexing(
    library: Library, searcher: Searcher, planted: Path, tmp_path: Path
) -> None:
    library.add("shared", [planted])
    [hit] = searcher.search("penguins swim in cold water", ["shared"], k=1)
    penguins = {str(planted / "notes.txt"), str(planted / "alias.txt")}  # alias links to it
    assert hit.path in penguins and searcher.fetch([hit.chunk_id])
    (planted / "notes.txt").unlink()
    (planted / "notes.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    # Until the next scan the index still holds the old text; it is not handed out,
    # since the file it came from now leads out of the folder.
    assert searcher.fetch([hit.chunk_id]) == []
    found = searcher.search("penguins swim in cold water", ["shared"], k=10)
    assert found and all(h.path not in penguins for h in found)
    report = library.rescan("shared")
    assert "links outside" in {s.path: s.reason for s in report.skipped}[str(planted / "notes.txt")]
    assert report.removed >= 1
