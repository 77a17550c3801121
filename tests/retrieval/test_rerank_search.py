"""Hybrid search re-ordered by a real cross-encoder reranker (tiny rank-pooling GGUF)."""

from __future__ import annotations

from pathlib import Path

from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from desktop.retrieval._indexer import Library
from desktop.retrieval._search import Searcher
from desktop.store._db import Database
from tests.fixtures.tiny_gguf import write_tiny_bert


def test_reranker_orders_the_final_hits(
    library: Library, database: Database, scheduler: Scheduler, corpus: Path, tmp_path: Path
) -> None:
    library.add("docs", [corpus])
    model = write_tiny_bert(tmp_path / "tiny-reranker.gguf", pooling=4, seed=5)
    spec = ModelSpec(model, "tiny-reranker", kind="reranker", context_length=256)
    rerank_scheduler = Scheduler(load_engine, lambda _ref: spec)
    calls: list[int] = []

    def rerank(query: str, passages: list[str]) -> list[float]:
        calls.append(len(passages))
        return rerank_scheduler.rerank("tiny-reranker", query, passages)

    ranked = Searcher(database, scheduler.embed, reranker=rerank).search("walruses giraffes", k=4)
    assert calls and calls[0] >= len(ranked)  # more candidates than k went to the reranker
    scores = [h.score for h in ranked]
    assert scores == sorted(scores, reverse=True)
    direct = rerank_scheduler.rerank("tiny-reranker", "walruses giraffes", [h.text for h in ranked])
    assert [round(s, 4) for s in direct] == [round(s, 4) for s in scores]
    rerank_scheduler.close()
