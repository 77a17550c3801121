"""Clicking a source shows the passage in its file: the cited lines marked, in view."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.retrieval._loaders import numbered_lines
from desktop.store._cited_passages import Source
from desktop.ui.chat.source_viewer import SourceViewer

pytestmark = pytest.mark.qt


def test_the_cited_lines_of_a_long_file_are_marked_and_scrolled_to(qtbot, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    lines = [f"Line {n} of the notes." for n in range(1, 301)]
    lines[199:202] = ["The walrus eats clams.", "It dives for them.", "Then it rests."]
    notes.write_text("\n".join(lines) + "\n", encoding="utf-8")
    viewer = SourceViewer(Source(3, str(notes), None, 200, 202, "The walrus eats clams."))
    qtbot.addWidget(viewer)
    viewer.show()
    qtbot.waitExposed(viewer)
    assert viewer.windowTitle() == "Source [3]: notes.md"
    assert viewer.location.text() == f"{notes} lines 200-202"
    assert viewer.marked_text() == "The walrus eats clams.\nIt dives for them.\nThen it rests."
    [mark] = viewer.text.extraSelections()
    assert mark.cursor.selectedText().startswith("The walrus eats clams.")
    # Scrolled to the passage: line 200 is on screen, the first line is not.
    top = viewer.text.cursorForPosition(viewer.text.viewport().rect().topLeft())
    assert 150 < top.blockNumber() + 1 <= 200
    assert not viewer.note.isVisible() and viewer.open_button.isEnabled()


def test_a_pdf_page_is_numbered_as_indexing_numbered_it(tmp_path: Path) -> None:
    from tests.retrieval.conftest import write_pdf  # a real two-page PDF

    pdf = write_pdf(tmp_path / "two.pdf", ["First page text.", "Second page\nline two"])
    assert numbered_lines(pdf, 2) == ["Second page", "line two"]
    assert numbered_lines(pdf, 1) == ["First page text."]


def test_a_file_changed_since_shows_the_stored_passage_and_says_so(qtbot, tmp_path: Path) -> None:
    short = tmp_path / "short.txt"
    short.write_text("only one line now\n", encoding="utf-8")
    viewer = SourceViewer(Source(1, str(short), None, 40, 41, "what line 40 said"))
    qtbot.addWidget(viewer)
    assert viewer.text.toPlainText() == "what line 40 said"
    assert "changed since it was indexed" in viewer.note.text()
