"""Indexing and searching a real corpus with the tiny BERT model through a real scheduler.

The tiny model's vectors carry no meaning, so relevance is checked through words the
keyword index must find and through exact-duplicate queries the vector index must find.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from desktop.base.errors import InvalidRequest
from desktop.retrieval._chunking import chunk_blocks
from desktop.retrieval._citations import build_messages, citations, prepare
from desktop.retrieval._indexer import IndexProgress, Library
from desktop.retrieval._loaders import Block, SkipFile, load, paragraphs
from desktop.retrieval._search import Searcher, hybrid_scores, normalised, vector_ranking
from tests.retrieval.conftest import MODEL, CountingEmbedder, write_pdf


def _paths(hits) -> list[str]:
    return [Path(h.path).name for h in hits]


def test_loaders_keep_pages_and_lines(corpus: Path) -> None:
    pdf = load(corpus / "report.pdf")
    assert [(b.page, b.text.split()[0]) for b in pdf] == [(1, "First"), (2, "Second")]
    assert "seals" in pdf[1].text
    html = load(corpus / "page.html")
    assert [b.text for b in html] == ["Volcano guide", "Lava flows from the volcano."]
    assert (html[1].line_start, html[1].line_end) == (3, 3)  # source line in the HTML file
    docx_blocks = load(corpus / "memo.docx")
    assert [(b.text, b.line_start) for b in docx_blocks] == [
        ("Quarterly memo.", 1),
        ("Budget for kangaroos approved.", 2),
    ]
    text = load(corpus / "notes" / "animals.txt")
    assert [(b.line_start, b.line_end) for b in text] == [(1, 1), (3, 3), (5, 5)]
    with pytest.raises(SkipFile, match="not a readable PDF"):
        load(corpus / "broken.pdf")
    with pytest.raises(SkipFile, match="unsupported"):
        load(corpus / "blob.bin")
    fake_text = corpus / "fake.txt"
    fake_text.write_bytes(b"\x00\x01binary")
    with pytest.raises(SkipFile, match="binary"):
        load(fake_text)
    with pytest.raises(SkipFile, match="too large"):
        load(corpus / "notes" / "animals.txt", max_bytes=10)


def test_encrypted_pdf_is_skipped_with_its_reason(tmp_path: Path) -> None:
    import pypdf

    plain = write_pdf(tmp_path / "plain.pdf", ["secret plans"])
    writer = pypdf.PdfWriter(clone_from=str(plain))
    writer.encrypt("pw", algorithm="RC4-128")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as handle:
        writer.write(handle)
    with pytest.raises(SkipFile, match="encrypted"):
        load(locked)


def test_chunks_respect_token_limit_paragraphs_overlap_and_pages() -> None:
    def words(texts):
        return [len(t.split()) for t in texts]

    blocks = [Block(f"para{i} " + "w " * 9, 1, i * 2 + 1, i * 2 + 1) for i in range(6)]
    blocks.append(Block("on page two", 2, 1, 1))
    chunks = chunk_blocks(blocks, words, max_tokens=30, overlap_tokens=10)
    assert all(c.tokens <= 30 for c in chunks)
    assert all(c.text.startswith("para") for c in chunks[:-1])  # starts on a paragraph
    # Each chunk begins with the last paragraph of the one before (overlap).
    first, second = chunks[0], chunks[1]
    assert second.text.split("\n\n")[0] == first.text.split("\n\n")[-1]
    assert chunks[-1].page == 2 and chunks[-1].text == "on page two"
    assert all(c.page == 1 for c in chunks[:-1])
    long_line = [Block("x " * 200, None, 7, 7)]
    pieces = chunk_blocks(long_line, words, max_tokens=50, overlap_tokens=0)
    assert len(pieces) >= 4 and all(len(p.text.split()) <= 50 for p in pieces)
    assert all((p.line_start, p.line_end) == (7, 7) for p in pieces)
    assert paragraphs("a\nb\n\n\nc") == [Block("a\nb", None, 1, 2), Block("c", None, 5, 5)]


def test_index_search_and_skip_report(library: Library, searcher: Searcher, corpus: Path) -> None:
    seen: list[IndexProgress] = []
    report = library.add("docs", [corpus], progress=seen.append)
    assert report.added == 6 and report.chunks_embedded > 0
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert set(reasons) == {"broken.pdf", "blob.bin"}  # and indexing carried on
    assert reasons["broken.pdf"].startswith("not a readable PDF")
    assert reasons["blob.bin"] == "unsupported file type '.bin'"
    assert seen[-1].files_done == seen[-1].files_total == 8
    [info] = library.collections()
    assert (info.name, info.embedding_model, info.documents, info.dimension) == (
        "docs",
        MODEL,
        6,
        32,
    )
    assert len(info.skipped) == 2

    assert _paths(searcher.search("walruses", ["docs"]))[0] == "report.pdf"
    hit = searcher.search("walruses")[0]
    assert hit.page == 2 and hit.keyword_rank == 1
    assert _paths(searcher.search("检索"))[0] == "zh.md"  # a Chinese word inside a sentence
    # A question whose words run together with others no text says verbatim (用向量检索文档).
    assert _paths(searcher.search("怎样用向量检索文档"))[0] == "zh.md"
    assert _paths(searcher.search("kangaroos"))[0] == "memo.docx"
    assert _paths(searcher.search("volcano"))[0] == "page.html"
    assert "hidden" not in _paths(searcher.search("var hidden"))  # script text not indexed
    assert all(".hidden" not in h.path for h in searcher.search("never indexed", k=50))
    # Vector side: a chunk's own text is its own nearest neighbour.
    giraffe = next(h for h in searcher.fetch(list(range(1, 50))) if "Giraffes" in h.text)
    vector = library.embedder_for(MODEL).embed([giraffe.text])[0]
    assert vector_ranking(library.database, 1, vector, 3)[0] == giraffe.chunk_id
    with pytest.raises(InvalidRequest, match="no collection"):
        searcher.search("cat", ["nope"])


def test_rescan_skips_unchanged_files_and_drops_deleted_ones(
    library: Library, searcher: Searcher, corpus: Path, embedders: dict[str, CountingEmbedder]
) -> None:
    library.add("docs", [corpus])
    first = len(embedders[MODEL].embedded)
    again = library.rescan("docs")
    assert (again.added, again.updated, again.unchanged, again.removed) == (0, 0, 6, 0)
    assert len(embedders[MODEL].embedded) == first  # nothing re-embedded

    animals = corpus / "notes" / "animals.txt"
    animals.write_text(
        animals.read_text(encoding="utf-8") + "\nOstriches run fast.\n", encoding="utf-8"
    )
    (corpus / "code.py").unlink()
    touched = corpus / "page.html"
    os.utime(touched, (1, 1))  # new mtime, same bytes: hashed, not re-chunked
    report = library.add("docs", [corpus])  # re-running add is an incremental rescan
    assert (report.updated, report.removed, report.unchanged) == (1, 1, 4)
    new_texts = embedders[MODEL].embedded[first:]
    assert new_texts and all("Ostriches" in t for t in new_texts)  # only the changed chunk
    assert "code.py" not in _paths(searcher.search("quicksort", k=50))
    assert _paths(searcher.search("ostriches"))[0] == "animals.txt"

    (corpus / "notes" / "zh.md").unlink()
    library.rescan("docs")
    assert "zh.md" not in _paths(searcher.search("向量检索", k=50))


def test_cancel_stops_between_files_and_keeps_what_was_done(library: Library, corpus: Path) -> None:
    cancel = threading.Event()

    def progress(p: IndexProgress) -> None:
        if p.files_done == 4:  # blob, broken (skipped), code, memo done; cancel mid-file 5
            cancel.set()

    report = library.add("docs", [corpus], progress=progress, cancel=cancel)
    assert report.cancelled
    assert library.collections()[0].documents == 2
    finished = library.rescan("docs")
    assert finished.unchanged == 2 and finished.added == 4


def test_changing_the_embedding_model_reindexes_everything(
    library: Library, corpus: Path, embedders: dict[str, CountingEmbedder]
) -> None:
    library.add("docs", [corpus])
    report = library.add("docs", [corpus], model="other-embed")
    assert report.added == 6 and report.unchanged == 0
    assert embedders["other-embed"].embedded
    [info] = library.collections()
    assert info.embedding_model == "other-embed"


def test_answer_prompt_numbers_sources_and_maps_citations(
    library: Library, searcher: Searcher, corpus: Path
) -> None:
    library.add("docs", [corpus])
    prepared = prepare(searcher, "walruses seals", ["docs"], k=3)
    system = prepared.messages[0].content
    assert "[1] report.pdf, page 2" in system and "walruses" in system
    assert prepared.messages[-1].content == "walruses seals"
    cited = citations("Walruses live there [1]. Also [1, 2] and [9].", prepared.sources)
    assert [c.number for c in cited] == [1, 2][: len(prepared.sources)]
    assert cited[0].page == 2 and cited[0].path.endswith("report.pdf")
    assert "no sources" in build_messages("q", [])[0].content


def test_keywords_break_near_ties_but_cannot_overturn_a_clear_vector_winner() -> None:
    # Chunk 1 is the clear semantic winner; 2 and 3 are nearly tied behind it.
    vector = normalised({1: 0.80, 2: 0.52, 3: 0.51, 4: 0.30})
    keyword = [(3, 9.0), (1, 1.0)]
    scores = hybrid_scores(vector, keyword, {3: 0.5, 1: 0.5})
    assert sorted(scores, key=lambda i: -scores[i])[:3] == [1, 3, 2]
    # A passage with every content word of the query is what a lookup wants.
    full = hybrid_scores(vector, keyword, {3: 1.0, 1: 0.5})
    assert max(full, key=full.__getitem__) == 3
    # An incidental match of one word in four counts for a quarter.
    weak = hybrid_scores(vector, [(2, 9.0)], {2: 0.25})
    assert weak[2] - vector[2] == pytest.approx(0.15 * 0.25)


def test_keyword_search_stays_inside_the_chosen_collections(
    library: Library, searcher: Searcher, tmp_path: Path
) -> None:
    for name in ("travel", "zoo"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.txt").write_text(f"Notes about {name}: the okapi is a rare animal.\n")
        library.add(name, [folder])
    assert _paths(searcher.search("okapi", ["zoo"], k=5)) == ["zoo.txt"]  # filtered
    assert sorted(_paths(searcher.search("okapi", k=5))) == ["travel.txt", "zoo.txt"]
    assert sorted(_paths(searcher.search("okapi", ["zoo", "travel"], k=5))) == [
        "travel.txt",
        "zoo.txt",
    ]  # every collection named: the unfiltered query


def test_files_that_cannot_be_indexed_are_never_read(
    library: Library, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.retrieval import _indexer as indexer

    read: list[str] = []
    real_open = indexer.open_inside
    monkeypatch.setattr(
        indexer,
        "open_inside",
        lambda path, roots: read.append(path.name) or real_open(path, roots),
    )
    report = library.add("docs", [corpus])
    assert "blob.bin" in {Path(s.path).name for s in report.skipped}  # still reported
    assert "blob.bin" not in read  # but an unsupported file is not opened (every hour)
    assert "report.pdf" in read
