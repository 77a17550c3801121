"""Grounding: numbered sources in the prompt, ``[n]`` mapped back to file, page, lines."""

from __future__ import annotations

from desktop.chat import Turn
from desktop.chat._grounding import cite, grounded_messages, stored_sources, was_cited
from desktop.engine._types import Message
from desktop.retrieval._search import Hit
from desktop.store._cited_passages import Source, location

HITS = [
    Hit(1, "docs", "/docs/report.pdf", 2, 3, 9, "Walruses eat clams.", 1.0),
    Hit(2, "docs", "/docs/notes.txt", None, 4, 4, "Seals sleep on ice.", 0.5),
]


def test_the_prompt_numbers_the_sources_and_keeps_the_users_system_prompt() -> None:
    sent = grounded_messages(
        [Message("system", "Answer in French."), Message("user", "What do walruses eat?")], HITS
    )
    assert [m.role for m in sent] == ["system", "user"]
    system = sent[0].content
    assert system.startswith("Answer in French.")
    assert "[1] report.pdf, page 2, lines 3-9\nWalruses eat clams." in system
    assert "[2] notes.txt, line 4\nSeals sleep on ice." in system


def test_citations_point_to_the_cited_file_page_and_lines() -> None:
    turn = Turn("assistant", "Seals sleep on ice [2].", sources=list(HITS))
    cite(turn)
    assert [(c.number, c.location) for c in turn.citations] == [(2, "/docs/notes.txt line 4")]
    assert was_cited(turn)
    assert [s.cited for s in stored_sources(turn)] == [False, True]


def test_an_answer_citing_nothing_shows_every_source_given_as_uncited() -> None:
    turn = Turn("assistant", "No idea [7].", sources=list(HITS))
    cite(turn)
    assert [c.location for c in turn.citations] == [
        "/docs/report.pdf p. 2, lines 3-9",
        "/docs/notes.txt line 4",
    ]
    assert not was_cited(turn)
    assert not any(s.cited for s in stored_sources(turn))


def test_stored_sources_read_back_cite_as_the_fresh_hits_did() -> None:
    stored = [Source(1, "/docs/report.pdf", 2, 3, 9, "Walruses eat clams.")]
    turn = Turn("assistant", "Clams [1].", sources=stored)
    cite(turn)
    assert turn.citations[0].location == "/docs/report.pdf p. 2, lines 3-9"


def test_hits_sources_and_citations_write_places_the_same_way() -> None:
    assert (
        HITS[0].location
        == location("/docs/report.pdf", 2, 3, 9)
        == Source(1, "/docs/report.pdf", 2, 3, 9).location
        == "/docs/report.pdf p. 2, lines 3-9"
    )
