"""The two-stage vector search against the exact one, its cache, and the migration backfill."""

from __future__ import annotations

import numpy as np
import pytest

from desktop.base.config import Paths
from desktop.retrieval._search import ensure_vec_table, to_blob, vec_table, vector_ranking
from desktop.retrieval._vectors import VectorIndex
from desktop.store._db import Database, migrate, open_database
from desktop.store._migrations import MIGRATIONS

pytestmark = pytest.mark.fast

DIM = 64


def _store(database: Database, vectors: np.ndarray, first_id: int = 1) -> None:
    """Chunks with these vectors in collection 1, written as the indexer writes them."""
    with database.transaction():
        if not database.query("SELECT 1 FROM collections WHERE id = 1"):
            dim = vectors.shape[1]
            database.execute(
                "INSERT INTO collections(id, name, embedding_model, dimension, "
                "created) VALUES (1, 'c', 'm', ?, 0)",
                (dim,),
            )
            database.execute("INSERT INTO documents VALUES (1, 1, 'a.txt', 0, 0, '', 0)")
            ensure_vec_table(database, 1, dim)
        has_bits = bool(database.query("SELECT 1 FROM sqlite_master WHERE name='chunk_bits'"))
        for offset, vector in enumerate(vectors):
            i = first_id + offset
            database.execute(
                "INSERT INTO chunks VALUES (?, 1, 1, ?, NULL, 1, 1, ?, 't')", (i, i, f"h{i}")
            )
            database.execute(
                f"INSERT INTO {vec_table(1)}(rowid, embedding) VALUES (?, ?)",
                (i, to_blob(vector.tolist())),
            )
            if has_bits:
                blob = to_blob(vector.tolist())
                database.execute(
                    "INSERT INTO chunk_bits VALUES (?, 1, vec_quantize_binary(?), ?)",
                    (i, blob, blob),
                )


def _clustered(rng: np.random.Generator, count: int, dim: int = DIM) -> np.ndarray:
    """Unit vectors around 50 centres, as embeddings of related texts are."""
    centres = rng.standard_normal((50, dim))
    points = centres[rng.integers(0, 50, count)] + 0.6 * rng.standard_normal((count, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def test_two_stage_search_finds_what_the_exact_scan_finds() -> None:
    rng = np.random.default_rng(3)
    database = open_database(Paths.from_env().database)
    stored = _clustered(rng, 3000)
    _store(database, stored)
    index = VectorIndex(database, exact_max=0)  # force the two stages even at 3,000
    overlap = []
    for source in rng.integers(0, 3000, 20):
        query = stored[source] + 0.02 * rng.standard_normal(DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        two_stage = index.ranking(1, query.tolist(), 10)
        exact = vector_ranking(database, 1, query.tolist(), 10)
        assert two_stage[0] == exact[0] == source + 1  # the near-duplicate comes first
        overlap.append(len(set(two_stage) & set(exact)) / 10)
    # Bits packed in another order than sqlite-vec's would make this near chance (~0.03).
    assert np.mean(overlap) >= 0.9
    database.close()


@pytest.mark.parametrize("dim", [40, 128])  # bytes scanned as bytes, and as 8-byte words
def test_two_stage_search_works_at_any_width(dim: int) -> None:
    rng = np.random.default_rng(dim)
    database = open_database(Paths.from_env().database)
    stored = _clustered(rng, 600, dim)
    _store(database, stored)
    index = VectorIndex(database, exact_max=0)
    for source in rng.integers(0, 600, 10):
        query = stored[source] + 0.01 * rng.standard_normal(dim).astype(np.float32)
        assert index.ranking(1, (query / np.linalg.norm(query)).tolist(), 5)[0] == source + 1
    database.close()


def test_new_and_deleted_vectors_are_seen_without_a_restart() -> None:
    rng = np.random.default_rng(4)
    database = open_database(Paths.from_env().database)
    _store(database, _clustered(rng, 500))
    index = VectorIndex(database, exact_max=0)
    fresh = _clustered(rng, 1)
    assert index.ranking(1, fresh[0].tolist(), 5)[0] != 501  # cache loaded without it
    _store(database, fresh, first_id=501)
    assert index.ranking(1, fresh[0].tolist(), 5)[0] == 501
    with database.transaction():
        database.execute(f"DELETE FROM {vec_table(1)} WHERE rowid = 501")
        database.execute("DELETE FROM chunks WHERE id = 501")  # cascades to chunk_bits
    assert 501 not in index.ranking(1, fresh[0].tolist(), 5)
    assert database.query("SELECT count(*) FROM chunk_bits")[0][0] == 500
    database.close()


def test_migration_quantizes_the_vectors_of_existing_collections() -> None:
    rng = np.random.default_rng(5)
    path = Paths.from_env().database
    old = Database(path)
    migrate(old, MIGRATIONS[:2])  # a database written before the two-stage search
    stored = _clustered(rng, 40)
    _store(old, stored)
    old.close()
    database = open_database(path)
    rows = database.query("SELECT chunk_id, bits, embedding FROM chunk_bits ORDER BY chunk_id")
    assert [r[0] for r in rows] == list(range(1, 41))
    expected = np.packbits(stored > 0, axis=1, bitorder="little")
    assert [bytes(r[1]) for r in rows] == [row.tobytes() for row in expected]
    assert [bytes(r[2]) for r in rows] == [row.tobytes() for row in stored]  # migration 4
    index = VectorIndex(database, exact_max=0)
    assert index.ranking(1, stored[7].tolist(), 3)[0] == 8
    database.close()


def test_the_similarities_hybrid_search_reuses_are_the_exact_ones() -> None:
    from desktop.retrieval._search import cosine_similarities

    rng = np.random.default_rng(6)
    database = open_database(Paths.from_env().database)
    stored = _clustered(rng, 800)
    _store(database, stored)
    query = (stored[3] + 0.1 * rng.standard_normal(DIM)).astype(np.float32)
    query = (query / np.linalg.norm(query)).tolist()
    two_stage = VectorIndex(database, exact_max=0).scored(1, query, 20)
    exact = cosine_similarities(database, query, [i for i, _ in two_stage])
    # Fusion mixes reused and looked-up similarities: they must be the same figures.
    assert {i: s for i, s in two_stage} == exact
    assert [s for _, s in two_stage] == sorted(exact.values(), reverse=True)
    # The exact scan's distances are vec0's own: none are offered for reuse.
    assert all(s is None for _, s in VectorIndex(database).scored(1, query, 20))
    database.close()
