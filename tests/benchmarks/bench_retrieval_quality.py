"""Ranking quality of vector-only, keyword-only and hybrid search with a real model.

Run: .venv/bin/python -m tests.benchmarks.bench_retrieval_quality [--model PATH]
Indexes each set of tests/benchmarks/retrieval_sets.py (one short file per document)
with the real all-MiniLM-L6-v2 GGUF through EdgeDesk's own indexer, then asks each
question three ways and prints hit@1, hit@3 and MRR (over the top 10) per set and
method. tests/retrieval/test_ranking_quality.py asserts the targets on the same sets.

The Chinese set is asked with the same English-centric MiniLM: no multilingual embedding
GGUF is shipped by any package installable here, so there the vector half is weak (it
knows some Chinese characters, not the language) and the set checks that it cannot drag
hybrid below keyword-only.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from desktop.retrieval._indexer import Library, SchedulerEmbedder
from desktop.retrieval._search import Searcher, keyword_ranking
from desktop.store._db import Database, open_database
from tests.benchmarks.retrieval_sets import SETS, Case

MODEL_NAME = "minilm"
MINILM = (
    Path(__file__).resolve().parents[2].parent / "shared" / "models" / "all-minilm-l6-v2-q8_0.gguf"
)
DEPTH = 10
METHODS = ("vector", "keyword", "hybrid")


@dataclass(frozen=True)
class Scores:
    """hit@1, hit@3 and MRR (top 10) of one method on one set."""

    hit1: float
    hit3: float
    mrr: float


def minilm_path() -> Path:
    """Where the MiniLM GGUF is: ../shared/models from the repo, else /work/shared/models."""
    for candidate in (MINILM, Path("/work/shared/models/all-minilm-l6-v2-q8_0.gguf")):
        if candidate.exists():
            return candidate
    return MINILM


def score(ranked_docs: Sequence[Sequence[str]], wanted: Sequence[str]) -> Scores:
    """Scores of rankings (document names, best first) against the wanted documents."""
    hit1 = hit3 = rr = 0.0
    for ranking, target in zip(ranked_docs, wanted, strict=True):
        top = list(dict.fromkeys(ranking))[:DEPTH]  # a document counts once
        if target in top:
            position = top.index(target) + 1
            hit1 += position == 1
            hit3 += position <= 3
            rr += 1.0 / position
    n = len(wanted)
    return Scores(hit1 / n, hit3 / n, rr / n)


class Evaluation:
    """One indexed set and the three ways to ask it."""

    def __init__(
        self, database: Database, searcher: Searcher, doc_of: Callable[[Sequence[int]], list[str]]
    ) -> None:
        self.database = database
        self.searcher = searcher
        self.doc_of = doc_of

    def ranked(self, method: str, question: str) -> list[str]:
        """Document names for ``question`` by ``method``, best first."""
        if method == "hybrid":
            return [Path(h.path).stem for h in self.searcher.search(question, k=DEPTH)]
        if method == "keyword":
            with self.database.lock:
                ids = keyword_ranking(self.database, [1], question, DEPTH)
            return self.doc_of(ids)
        vector = self.searcher.embed(MODEL_NAME, [question], None)[0]
        return self.doc_of(self.searcher.vectors.ranking(1, vector, DEPTH))

    def scores(self, cases: Sequence[Case]) -> dict[str, Scores]:
        """Each method's scores on ``cases``."""
        wanted = [name for name, _, _ in cases]
        return {m: score([self.ranked(m, q) for _, _, q in cases], wanted) for m in METHODS}


@contextmanager
def evaluation(cases: Sequence[Case], model: Path, folder: Path) -> Iterator[Evaluation]:
    """``cases`` indexed with the real embedding model, ready to be asked."""
    docs = folder / "docs"
    docs.mkdir()
    for name, text, _ in cases:
        (docs / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    scheduler = Scheduler(
        load_engine,
        {MODEL_NAME: ModelSpec(model, MODEL_NAME, kind="embedding", context_length=512)}.get,
    )
    database = open_database(folder / "quality.db")
    try:
        library = Library(
            database, lambda m: SchedulerEmbedder(scheduler, m), default_model=MODEL_NAME
        )
        library.add("eval", [docs])
        searcher = Searcher(database, lambda m, texts, c: scheduler.embed(m, list(texts), c))
        names = {
            int(r[0]): Path(r[1]).stem
            for r in database.query(
                "SELECT c.id, d.path FROM chunks c JOIN documents d ON d.id = c.document_id"
            )
        }
        yield Evaluation(database, searcher, lambda ids: [names[i] for i in ids])
    finally:
        database.close()
        scheduler.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table for every set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=minilm_path())
    args = parser.parse_args(argv)
    print("| set | method | hit@1 | hit@3 | MRR |\n|---|---|---|---|---|")
    for set_name, cases in SETS.items():
        with tempfile.TemporaryDirectory() as tmp, evaluation(cases, args.model, Path(tmp)) as ev:
            for method, s in ev.scores(cases).items():
                print(
                    f"| {set_name} ({len(cases)}) | {method} | {s.hit1:.2f} | {s.hit3:.2f} "
                    f"| {s.mrr:.3f} |"
                )


if __name__ == "__main__":
    main()
