"""Hybrid search (sqlite-vec + FTS5, Chinese too) ranks the same on the encrypted database."""

from __future__ import annotations

from pathlib import Path

from desktop.base.config import Paths
from desktop.engine._scheduler import Scheduler
from desktop.retrieval._indexer import Library, SchedulerEmbedder
from desktop.retrieval._search import Searcher
from desktop.store import _cipher as cipher
from desktop.store._atrest import AtRest
from desktop.store._db import Database, open_database
from tests.retrieval.conftest import MODEL

QUERIES = ("walruses", "检索", "怎样用向量检索文档", "kangaroos", "volcano", "cat garden", "模型")


def _rankings(
    database: Database, scheduler: Scheduler
) -> dict[str, list[tuple[int, str, float, int | None, int | None]]]:
    searcher = Searcher(database, scheduler.embed)
    return {
        q: [
            (h.chunk_id, h.path, round(h.score, 6), h.vector_rank, h.keyword_rank)
            for h in searcher.search(q, k=8)
        ]
        for q in QUERIES
    }


def test_encrypted_database_searches_exactly_like_the_plaintext_one(
    scheduler: Scheduler, corpus: Path, file_keyring: Path
) -> None:
    path = Paths.from_env().database
    plain = open_database(path)
    library = Library(
        plain,
        lambda m: SchedulerEmbedder(scheduler, m),
        default_model=MODEL,
        max_tokens=64,
        overlap_tokens=12,
    )
    library.add("docs", [corpus])
    before = _rankings(plain, scheduler)
    plain.close()
    assert all(before.values()) and b"walruses" in path.read_bytes()

    key = AtRest(path).encrypt()
    assert cipher.file_state(path) == "encrypted"
    encrypted = open_database(path, key=key)
    assert encrypted.vec_loaded and encrypted.encrypted
    assert _rankings(encrypted, scheduler) == before
    # New chunks indexed into the encrypted file are found too, and stay unreadable on disk.
    (corpus / "extra.txt").write_text(
        "Okapis graze quietly. 斑马在草原上奔跑。\n", encoding="utf-8"
    )
    Library(
        encrypted,
        lambda m: SchedulerEmbedder(scheduler, m),
        default_model=MODEL,
        max_tokens=64,
        overlap_tokens=12,
    ).rescan("docs")
    searcher = Searcher(encrypted, scheduler.embed)
    assert searcher.search("okapis")[0].path.endswith("extra.txt")
    assert searcher.search("斑马")[0].path.endswith("extra.txt")
    encrypted.close()
    on_disk = b"".join(p.read_bytes() for p in (path, *cipher.sidecars(path)) if p.exists())
    for word in ("walruses", "Okapis", "向量检索", "斑马"):
        assert word.encode() not in on_disk
