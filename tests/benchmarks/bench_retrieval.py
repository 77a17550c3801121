"""Hybrid-search latency at 10k/100k chunks (384/1024 dims) and indexing throughput.

Run: .venv/bin/python -m tests.benchmarks.bench_retrieval [--sizes 10000 100000]
     [--dims 384 1024] [--queries 50]
Search uses synthetic unit vectors and generated English text stored exactly as the
indexer stores them (chunks, FTS5, sqlite-vec); the query vector is random, so the
figure measures the database work, not a model. Indexing throughput uses the tiny BERT
GGUF test model through the real Scheduler, so it measures our pipeline's overhead
(loading, chunking, hashing, storing) more than a real BGE's speed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from desktop.engine.loader import load_engine
from desktop.engine.scheduler import Scheduler
from desktop.engine.types import ModelSpec
from desktop.retrieval.indexer import Library, SchedulerEmbedder
from desktop.retrieval.search import (
    Searcher,
    ensure_vec_table,
    keyword_ranking,
    to_blob,
    vec_table,
    vector_ranking,
)
from desktop.store.db import fts_text, open_database
from tests.fixtures.tiny_gguf import write_tiny_bert

WORDS = ("model vector search index document page line answer token chunk cat dog zebra "
         "river mountain engine memory quantum garden library music paper ocean").split()
# A Zipf-like vocabulary, as real text has: a few words everywhere, most words rare.
VOCAB = [f"{WORDS[i % len(WORDS)]}{i}" for i in range(20_000)]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(VOCAB))]


def _unit(rng: random.Random, dim: int) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(dim)]
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def search_latency(size: int, dim: int, queries: int, folder: Path
                   ) -> tuple[float, float, float, float]:
    """p50/p95 ms of Searcher.search over ``size`` chunks, and p50 of its two halves."""
    rng = random.Random(size + dim)
    database = open_database(folder / f"bench-{size}-{dim}.db")
    with database.transaction():
        database.execute("INSERT INTO collections(id, name, embedding_model, dimension, created)"
                         " VALUES (1, 'bench', 'synthetic', ?, 0)", (dim,))
        database.execute("INSERT INTO documents VALUES (1, 1, 'bench.txt', 0, 0, '', 0)")
        ensure_vec_table(database, 1, dim)
        for i in range(1, size + 1):
            text = " ".join(rng.choices(VOCAB, WEIGHTS, k=60))
            database.execute("INSERT INTO chunks VALUES (?, 1, 1, ?, NULL, ?, ?, ?, ?)",
                             (i, i, i, i, f"h{i}", text))
            database.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)",
                             (i, fts_text(text)))
            database.execute(f"INSERT INTO {vec_table(1)}(rowid, embedding) VALUES (?, ?)",
                             (i, to_blob(_unit(rng, dim))))
    queries_v = [_unit(rng, dim) for _ in range(queries)]
    searcher = Searcher(database, lambda _m, _t: [queries_v[0]])
    searcher.search("zebra river", k=8)  # warm the page cache
    times: list[float] = []
    vec_ms: list[float] = []
    key_ms: list[float] = []
    for q in range(queries):
        vector = queries_v[q]
        searcher.embed = lambda _m, _t, v=vector: [v]
        words = " ".join(rng.choices(VOCAB[20:2000], k=3))  # typical query words
        started = time.perf_counter()
        searcher.search(words, k=8)
        times.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        vector_ranking(database, 1, vector, 50)
        vec_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        keyword_ranking(database, [1], words, 50)
        key_ms.append((time.perf_counter() - started) * 1000)
    database.close()
    times.sort()
    return (statistics.median(times), times[int(len(times) * 0.95) - 1],
            statistics.median(vec_ms), statistics.median(key_ms))


def indexing_throughput(files: int, folder: Path) -> tuple[int, float]:
    """Chunks embedded per second indexing generated text files with the tiny model."""
    model = write_tiny_bert(folder / "tiny-embed.gguf")
    corpus = folder / "corpus"
    corpus.mkdir()
    rng = random.Random(7)
    for i in range(files):
        paragraphs = ["\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(4))
                      for _ in range(12)]
        (corpus / f"doc{i}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    scheduler = Scheduler(load_engine, {"tiny": ModelSpec(model, "tiny", kind="embedding",
                                                          context_length=512)}.__getitem__)
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("| chunks | dim | hybrid p50 ms | hybrid p95 ms | vector p50 ms | BM25 p50 ms |")
        print("|---:|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            for dim in args.dims:
                p50, p95, vec, key = search_latency(size, dim, args.queries, folder)
                print(f"| {size:,} | {dim} | {p50:.1f} | {p95:.1f} | {vec:.1f} | {key:.1f} |",
                      flush=True)
        chunks, rate = indexing_throughput(args.files, folder)
        print(f"\nindexing: {chunks} chunks, {rate:.0f} chunks/s (tiny BERT, CPU)")


if __name__ == "__main__":
    main()
