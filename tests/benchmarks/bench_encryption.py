"""Encrypted (SQLCipher) vs plaintext database, same content, same run: the cost of encryption.

Run: .venv/bin/python -m tests.benchmarks.bench_encryption [--messages 100000]
     [--chunks 100000] [--dim 384] [--repeat 30] [--db-dir DIR]
Builds a plaintext database of ``--messages`` messages (50 per conversation, generated
English and Chinese text, stored exactly as ``ChatStore`` stores them, FTS included) and
``--chunks`` document chunks (text, FTS5, sqlite-vec vectors and bits, as the indexer
stores them), then an encrypted copy of it through ``edgedesk data encrypt``'s own
conversion. Each operation is timed on both, alternating which goes first, and the
medians are compared (target: encrypted <= 1.15x plaintext):

- chat listing: ``ChatStore.list_conversations()`` (every conversation header);
- message append: ``ChatStore.add_message`` (a durable write, synchronous=FULL);
- full-text search: the window's sidebar search (``ChatStore.list_conversations`` with
  ``search``: the conversations holding one or two words, Chinese among them);
- full-text hits: ``ChatStore.search`` (up to 200 matching messages with snippets);
- hybrid search: ``Searcher.search`` over the chunks (two-stage vectors + BM25 + fusion),
  with a fixed random query vector (the database work, not a model's).

``--db-dir`` keeps the generated databases and reuses them (building 100k chunks takes
minutes). Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from desktop.retrieval._search import Searcher, ensure_vec_table, vec_table
from desktop.store import _cipher as cipher
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from desktop.store._cipher import DatabaseKey
from desktop.store._db import Database, fts_text, open_database

WORDS = (
    "model vector search index document page line answer token chunk cat dog zebra "
    "river mountain engine memory quantum garden library music paper ocean"
).split()
VOCAB = [f"{WORDS[i % len(WORDS)]}{i}" for i in range(20_000)] + [
    "向量",
    "检索",
    "文档",
    "模型",
    "病历",
    "合同",
    "代码",
    "客户",
]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(VOCAB))]
KEY = DatabaseKey("5a" * 32, source="benchmark")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(VOCAB, WEIGHTS, k=words))


def build(path: Path, messages: int, chunks: int, dim: int) -> None:
    """The plaintext database: conversations, messages and chunks, as the app stores them."""
    rng = random.Random(7)
    database = open_database(path)
    chats = ChatStore(None)._memory  # the SQL ChatStore runs, on our connection
    chats.database = database
    started = time.perf_counter()
    with database.transaction():
        conv = 0
        for i in range(messages):
            if i % 50 == 0:
                conv = chats.insert(
                    f"conversation {i // 50}", "bench-model", [], created=1_700_000_000 + i
                )
            chats.append(
                conv,
                ChatMessage(
                    "user" if i % 2 == 0 else "assistant", _text(rng, 40), created=1_700_000_000 + i
                ),
            )
    print(f"  {messages:,} messages in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    started = time.perf_counter()
    nrng = np.random.default_rng(dim)
    with database.transaction():
        database.execute(
            "INSERT INTO collections(id, name, embedding_model, dimension, "
            "created) VALUES (1, 'bench', 'synthetic', ?, 0)",
            (dim,),
        )
        database.execute("INSERT INTO documents VALUES (1, 1, 'bench.txt', 0, 0, '', 0)")
        ensure_vec_table(database, 1, dim)
        for start in range(0, chunks, 1000):
            block = nrng.standard_normal((min(1000, chunks - start), dim)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            for offset, vector in enumerate(block):
                i = start + offset + 1
                text = _text(rng, 60)
                blob = vector.tobytes()
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
                    "INSERT INTO chunk_bits VALUES (?, 1, vec_quantize_binary(?), ?)",
                    (i, blob, blob),
                )
    database.close()
    print(f"  {chunks:,} chunks in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def _ms(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def compare(
    name: str, plain: Callable[[], object], encrypted: Callable[[], object], repeat: int
) -> tuple[str, float, float]:
    """Median milliseconds of each, alternating which runs first; warmed once."""
    plain()
    encrypted()
    a: list[float] = []
    b: list[float] = []
    for n in range(repeat):
        pair = [(plain, a), (encrypted, b)]
        for work, into in pair if n % 2 else pair[::-1]:
            into.append(_ms(work))
    return name, statistics.median(a), statistics.median(b)


def run(folder: Path, messages: int, chunks: int, dim: int, repeat: int) -> None:
    """Build (or reuse) both databases and print the comparison table."""
    plain_path = folder / f"plain-{messages}-{chunks}-{dim}.db"
    secret_path = folder / f"encrypted-{messages}-{chunks}-{dim}.db"
    if not plain_path.exists():
        print("building the plaintext database…", file=sys.stderr)
        build(plain_path, messages, chunks, dim)
    if not secret_path.exists():
        started = time.perf_counter()
        shutil.copyfile(plain_path, secret_path)
        cipher.convert(secret_path, source=None, target=KEY)
        print(f"  encrypted copy in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    stores = {"plain": ChatStore(plain_path), "enc": ChatStore(secret_path, key=KEY)}
    bases: dict[str, Database] = {
        "plain": open_database(plain_path),
        "enc": open_database(secret_path, key=KEY),
    }
    rng = random.Random(11)
    vector = np.random.default_rng(3).standard_normal(dim).astype(np.float32)
    vector /= np.linalg.norm(vector)

    def embed(_m: str, _t: Sequence[str], _c: object) -> list[list[float]]:
        return [vector.tolist()]

    searchers = {k: Searcher(db, embed) for k, db in bases.items()}
    target = {k: s.list_conversations()[0].id for k, s in stores.items()}
    queries = [
        " ".join(rng.choices(VOCAB[20:2000], k=rng.choice((1, 2)))) for _ in range(repeat)
    ] + ["检索", "病历 合同"]
    words = iter(queries * 6)
    current = [next(words)]

    def fts(kind: str) -> Callable[[], object]:
        return lambda: stores[kind].list_conversations(search=current[0])

    def hits(kind: str) -> Callable[[], object]:
        return lambda: stores[kind].search(current[0])

    rows = [
        compare(
            "chat listing",
            lambda: stores["plain"].list_conversations(),
            lambda: stores["enc"].list_conversations(),
            repeat,
        )
    ]
    text = "a new message appended to the conversation " * 4
    rows.append(
        compare(
            "message append",
            lambda: stores["plain"].add_message(target["plain"], ChatMessage("user", text)),
            lambda: stores["enc"].add_message(target["enc"], ChatMessage("user", text)),
            repeat,
        )
    )
    plain_fts, enc_fts = fts("plain"), fts("enc")

    def next_query() -> None:
        current[0] = next(words)

    for name, plain_work, enc_work in (
        ("full-text search", plain_fts, enc_fts),
        ("full-text hits", hits("plain"), hits("enc")),
    ):
        # A new query each time: pages not yet read (and decrypted) are part of the cost.
        fts_a: list[float] = []
        fts_b: list[float] = []
        for n in range(len(queries)):
            next_query()
            pair = [(plain_work, fts_a), (enc_work, fts_b)]
            for work, into in pair if n % 2 else pair[::-1]:
                into.append(_ms(work))
        rows.append((name, statistics.median(fts_a), statistics.median(fts_b)))
    rows.append(
        compare(
            f"hybrid search ({chunks // 1000}k chunks)",
            lambda: searchers["plain"].search(current[0], k=8),
            lambda: searchers["enc"].search(current[0], k=8),
            repeat,
        )
    )
    for store in stores.values():
        store.close()
    for db in bases.values():
        db.close()
    print(
        f"\n{messages:,} messages, {chunks:,} chunks ({dim} dims), median of {repeat} "
        "(SQLCipher " + cipher.cipher_version() + ")\n"
    )
    print("| operation | plaintext ms | encrypted ms | ratio |")
    print("|---|---:|---:|---:|")
    for name, plain, enc in rows:
        print(f"| {name} | {plain:.2f} | {enc:.2f} | {enc / plain:.2f}x |")


def main() -> None:
    """Parse the flags and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--db-dir", type=Path, default=None)
    args = parser.parse_args()
    folder = args.db_dir or Path(tempfile.mkdtemp(prefix="edgedesk-bench-enc-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        run(folder, args.messages, args.chunks, args.dim, args.repeat)
    finally:
        if args.db_dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
