"""Hybrid-search latency at 10k/100k chunks (384/1024 dims) and indexing throughput.

Run: .venv/bin/python -m tests.benchmarks.bench_retrieval [--sizes 10000 100000]
     [--dims 384 1024] [--queries 50] [--baseline GIT_REV] [--db-dir DIR]
Each row times the old exact vector search and the two-stage one (binary-quantized scan,
exact re-scoring) query by query in the same run, and the two-stage recall@10 against
the exact top 10 for random queries, and whether both put the same chunk first for
queries near a stored vector.
``--baseline REV`` also times that git revision's search (its ``desktop/retrieval``
search, vectors and stopwords modules, loaded beside ours) against the working tree's,
alternating which goes first, in wall and CPU time, and counts the queries where the two
return different chunks or scores. ``--db-dir`` keeps the generated databases there and
reuses them (building 100,000 chunks takes minutes).
Search uses synthetic unit vectors and generated English text stored exactly as the
indexer stores them (chunks, FTS5, sqlite-vec); the query vector is random, so the
figure measures the database work, not a model. Indexing throughput uses the tiny BERT
GGUF test model through the real Scheduler, so it measures our pipeline's overhead
(loading, chunking, hashing, storing) more than a real BGE's speed.
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from desktop.retrieval._indexer import Library, SchedulerEmbedder
from desktop.retrieval._search import (
    Searcher,
    ensure_vec_table,
    keyword_ranking,
    vec_table,
    vector_ranking,
)
from desktop.retrieval._vectors import VectorIndex
from desktop.store._db import Database, fts_text, open_database
from tests.fixtures.tiny_gguf import write_tiny_bert

WORDS = (
    "model vector search index document page line answer token chunk cat dog zebra "
    "river mountain engine memory quantum garden library music paper ocean"
).split()
# A Zipf-like vocabulary, as real text has: a few words everywhere, most words rare.
VOCAB = [f"{WORDS[i % len(WORDS)]}{i}" for i in range(20_000)]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(VOCAB))]


def _unit(rng: random.Random, dim: int) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(dim)]
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


@dataclass
class Row:
    """One size x dimension: both methods' latencies (ms) and the two-stage recall@10."""

    exact: list[float] = field(default_factory=list)
    two_stage: list[float] = field(default_factory=list)
    exact_vec: list[float] = field(default_factory=list)
    two_stage_vec: list[float] = field(default_factory=list)
    bm25: list[float] = field(default_factory=list)
    recall_random: list[float] = field(default_factory=list)
    top1_near: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    baseline_cpu: list[float] = field(default_factory=list)
    current_cpu: list[float] = field(default_factory=list)
    current: list[float] = field(default_factory=list)
    differing: int = 0


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q + 0.5) - 1)] if q < 1 else ordered[-1]


def _timed(work: Callable[[], object], into: list[float], cpu: list[float] | None = None) -> object:
    started, used = time.perf_counter(), time.process_time()
    result = work()
    into.append((time.perf_counter() - started) * 1000)
    if cpu is not None:
        cpu.append((time.process_time() - used) * 1000)
    return result


def baseline_search(revision: str) -> ModuleType:
    """``desktop.retrieval._search`` as it was at git ``revision``, importable beside ours."""
    root = Path(__file__).resolve().parents[2]
    package = f"baseline_{abs(hash(revision))}"
    folder = Path(tempfile.mkdtemp()) / package
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    # The modules have a leading underscore since the retrieval face (issue 51).
    for name in ("_search", "_vectors", "_stopwords", "search", "vectors", "stopwords"):
        shown = subprocess.run(
            ["git", "show", f"{revision}:desktop/retrieval/{name}.py"],
            cwd=root,
            check=False,
            capture_output=True,
            text=True,
        )
        if shown.returncode:
            continue  # not there yet at that revision
        source = shown.stdout.replace("desktop.retrieval.", f"{package}.")
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(folder.parent))
    private = (folder / "_search.py").exists()
    return importlib.import_module(f"{package}.{'_search' if private else 'search'}")


def _database(
    size: int, dim: int, folder: Path, stored: np.ndarray, rng: random.Random
) -> Database:
    path = folder / f"bench-{size}-{dim}.db"
    if path.exists():
        return open_database(path)  # kept by --db-dir: the same seeded content
    database = open_database(path)
    with database.transaction():
        database.execute(
            "INSERT INTO collections(id, name, embedding_model, dimension, created)"
            " VALUES (1, 'bench', 'synthetic', ?, 0)",
            (dim,),
        )
        database.execute("INSERT INTO documents VALUES (1, 1, 'bench.txt', 0, 0, '', 0)")
        ensure_vec_table(database, 1, dim)
        for i in range(1, size + 1):
            text = " ".join(rng.choices(VOCAB, WEIGHTS, k=60))
            blob = stored[i - 1].tobytes()
            database.execute(
                "INSERT INTO chunks VALUES (?, 1, 1, ?, NULL, ?, ?, ?, ?)",
                (i, i, i, i, f"h{i}", text),
            )
            database.execute(
                "INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (i, fts_text(text))
            )
            database.execute(
                f"INSERT INTO {vec_table(1)}(rowid, embedding) VALUES (?, ?)", (i, blob)
            )
            database.execute(
                "INSERT INTO chunk_bits VALUES (?, 1, vec_quantize_binary(?), ?)", (i, blob, blob)
            )
    return database


def search_latency(
    size: int, dim: int, queries: int, folder: Path, baseline: ModuleType | None = None
) -> Row:
    """Exact and two-stage hybrid search over ``size`` chunks, timed query by query."""
    rng = random.Random(size + dim)
    nrng = np.random.default_rng(size + dim)
    stored = nrng.standard_normal((size, dim)).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    database = _database(size, dim, folder, stored, rng)
    rng = random.Random(size * dim)  # the queries: the same whether built or reused
    # _c has a default: an older baseline Searcher calls embed with two arguments
    exact = Searcher(database, lambda _m, _t, _c=None: [[0.0] * dim])
    exact.vectors = VectorIndex(database, exact_max=size + 1)  # the old, exact method
    two_stage = Searcher(database, exact.embed)
    exact.search("zebra river", k=8)
    two_stage.search("zebra river", k=8)  # warm the page cache and load the bits
    old = baseline.Searcher(database, exact.embed) if baseline is not None else None
    if old is not None:
        old.search("zebra river", k=8)
    row = Row()
    for n in range(queries):
        vector = _unit(rng, dim)

        def embed(_m: str, _t: Sequence[str], v: list[float] = vector) -> list[list[float]]:
            return [v]

        exact.embed = two_stage.embed = embed
        words = " ".join(rng.choices(VOCAB[20:2000], k=3))  # typical query words
        if old is not None:
            old.embed = embed
            pair = [
                (lambda: old.search(words, k=8), row.baseline, row.baseline_cpu),
                (lambda: two_stage.search(words, k=8), row.current, row.current_cpu),
            ]
            answers = [_timed(*timing) for timing in (pair if n % 2 else pair[::-1])]
            a, b = (
                [(h.chunk_id, round(h.score, 9)) for h in hits]  # type: ignore[attr-defined]
                for hits in answers
            )
            row.differing += a != b
        _timed(lambda: exact.search(words, k=8), row.exact)
        _timed(lambda: two_stage.search(words, k=8), row.two_stage)
        _timed(lambda: vector_ranking(database, 1, vector, 50), row.exact_vec)
        _timed(lambda: two_stage.vectors.ranking(1, vector, 50, wanted=8), row.two_stage_vec)
        _timed(lambda: keyword_ranking(database, [1], words, 50), row.bm25)
        truth = set(vector_ranking(database, 1, vector, 10))
        row.recall_random.append(len(truth & set(two_stage.vectors.ranking(1, vector, 10))) / 10)
        # A query near a stored chunk, as a question is near the passage that answers it.
        near = (
            stored[rng.randrange(size)]
            + 0.5 * nrng.standard_normal(dim).astype(np.float32) / dim**0.5
        )
        near_v = (near / np.linalg.norm(near)).tolist()
        # Random data has no neighbourhoods beyond that one vector: count top-1 agreement.
        row.top1_near.append(
            float(
                vector_ranking(database, 1, near_v, 1)[0]
                == two_stage.vectors.ranking(1, near_v, 10)[0]
            )
        )
    database.close()
    return row


def indexing_throughput(files: int, folder: Path) -> tuple[int, float]:
    """Chunks embedded per second indexing generated text files with the tiny model."""
    model = write_tiny_bert(folder / "tiny-embed.gguf")
    corpus = folder / "corpus"
    corpus.mkdir()
    rng = random.Random(7)
    for i in range(files):
        paragraphs = [
            "\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(4)) for _ in range(12)
        ]
        (corpus / f"doc{i}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    scheduler = Scheduler(
        load_engine,
        {"tiny": ModelSpec(model, "tiny", kind="embedding", context_length=512)}.__getitem__,
    )
    database = open_database(folder / "index.db")
    library = Library(database, lambda m: SchedulerEmbedder(scheduler, m), default_model="tiny")
    scheduler.load("tiny")
    started = time.perf_counter()
    report = library.add("bench", [corpus])
    elapsed = time.perf_counter() - started
    database.close()
    scheduler.close()
    return report.chunks_embedded, report.chunks_embedded / elapsed


def main() -> None:
    """Print the figures as Markdown table rows."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--dims", type=int, nargs="+", default=[384, 1024])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--baseline", help="a git revision whose search to time beside ours")
    parser.add_argument("--db-dir", type=Path, help="keep and reuse the databases here")
    args = parser.parse_args()
    baseline = baseline_search(args.baseline) if args.baseline else None
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.db_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(
            "| chunks | dim | exact p50 / p95 ms | two-stage p50 / p95 ms | p50 ratio | "
            "exact vector p50 | two-stage vector p50 | BM25 p50 | recall@10 / near top-1 |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            for dim in args.dims:
                r = search_latency(size, dim, args.queries, folder, baseline)
                med = statistics.median
                print(
                    f"| {size:,} | {dim} | {med(r.exact):.1f} / {_p(r.exact, 0.95):.1f} | "
                    f"{med(r.two_stage):.1f} / {_p(r.two_stage, 0.95):.1f} | "
                    f"{med(r.exact) / med(r.two_stage):.1f}x | {med(r.exact_vec):.1f} | "
                    f"{med(r.two_stage_vec):.1f} | {med(r.bm25):.1f} | "
                    f"{statistics.mean(r.recall_random):.2f} / "
                    f"{statistics.mean(r.top1_near):.2f} |",
                    flush=True,
                )
                if baseline is not None:
                    print(
                        f"|  | A/B, {args.baseline} -> working tree: wall p50 / p95 "
                        f"{med(r.baseline):.1f} / {_p(r.baseline, 0.95):.1f} -> "
                        f"{med(r.current):.1f} / {_p(r.current, 0.95):.1f} ms; CPU p50 / "
                        f"p95 {med(r.baseline_cpu):.1f} / {_p(r.baseline_cpu, 0.95):.1f} -> "
                        f"{med(r.current_cpu):.1f} / {_p(r.current_cpu, 0.95):.1f} ms; "
                        f"{r.differing} of {len(r.current)} queries ranked differently |",
                        flush=True,
                    )
        if args.files:
            chunks, rate = indexing_throughput(args.files, folder)
            print(f"\nindexing: {chunks} chunks, {rate:.0f} chunks/s (tiny BERT, CPU)")


if __name__ == "__main__":
    main()
