"""Hybrid retrieval: sqlite-vec nearest neighbours + FTS5 BM25, fused by normalised score.

Each collection keeps its vectors in its own ``vec0`` table, sized for the embedding
model it was built with; the query is embedded with that same model, so vectors of two
models are never compared. Large collections are searched in two stages (binary-quantized
scan, exact re-scoring): see ``_vectors``.

Fusion, decided from measurements (tests/benchmarks/bench_retrieval_quality.py, the
table in docs/benchmarks.md): reciprocal-rank fusion let incidental keyword matches
("how", "the", "keeps") outvote a clear vector winner, so a hybrid answer was worse than
vector search alone on paraphrased questions. Now each candidate's score is its cosine
similarity, min-max normalised over the candidates of its collection (1 = best), plus
``KEYWORD_WEIGHT`` x its BM25 relative to the best keyword match x the share of the
query's content words it contains, plus ``FULL_MATCH_BONUS`` when it contains them all
(an exact lookup finds what says it). Stop words (English and Chinese) are dropped from the
keyword query. Keywords thus break near-ties (an error code, a part number, a name that
embeddings blur) but cannot overturn a clear semantic winner.

A query with Chinese, Japanese or Korean words is searched by their character pairs
(``_stopwords.search_terms``) and fused with ``CJK_KEYWORD_WEIGHT``, without the coverage
gate: on the Chinese set the English-centric MiniLM ranked the right passage first for 4
of 22 questions, the keywords for 11, and the gated weight let the weak vector side drag
hybrid below keyword-only (0.23 hit@1). Weights 0.65-2.0 all give 0.50 hit@1 (= keyword
only) and a better MRR than either half, leaving English as it was.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from desktop.base.errors import InvalidRequest, StoreError
from desktop.retrieval._fsnames import fs_path, real_root
from desktop.retrieval._handles import still_inside
from desktop.retrieval._stopwords import is_cjk, search_terms
from desktop.retrieval._vectors import VectorIndex, exact_ranking, to_blob, vec_table
from desktop.store import Database, fts_text, location

__all__ = [
    "Hit",
    "Reranker",
    "Searcher",
    "drop_vec_table",
    "ensure_vec_table",
    "hybrid_scores",
    "keyword_query",
    "keyword_ranking",
    "to_blob",
    "vec_table",
    "vector_ranking",
]

MAX_QUERY_CHARS = 16_384  # the longest search query (docs/api.md); a pasted page is ~4 KB

# The keyword evidence's weight against the normalised vector score (0..1). Measured:
# 0.12-0.17 keeps hybrid >= the better of vector-only and keyword-only on both sets;
# above 0.17 keyword matches start to overturn right vector answers.
KEYWORD_WEIGHT = 0.15
# For CJK queries keyword and vector evidence weigh the same; see the module docstring.
CJK_KEYWORD_WEIGHT = 1.0
# A passage holding every content word of the query is lifted by one full vector spread:
# a one-word lookup ("kangaroos") finds the passages that say it. Measured: no loss on
# either evaluation set (0.3 to 1.0 all equal there).
FULL_MATCH_BONUS = 1.0
# (model, texts, cancel) -> vectors; cancel set stops the engine between decodes (Cancelled)
EmbedFn = Callable[[str, Sequence[str], threading.Event | None], list[list[float]]]


class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant (bge-reranker, when installed)."""

    def __call__(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage."""
        ...


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: where it is, what it says, and how it ranked."""

    chunk_id: int
    collection: str
    path: str
    page: int | None
    line_start: int
    line_end: int
    text: str
    score: float
    vector_rank: int | None = None
    keyword_rank: int | None = None

    @property
    def location(self) -> str:
        """``file.pdf p. 3, lines 10-14`` — what a citation shows."""
        return location(self.path, self.page, self.line_start, self.line_end)


def ensure_vec_table(database: Database, collection_id: int, dimension: int) -> None:
    """Create the collection's vector table for ``dimension``-wide unit vectors."""
    if not database.vec_loaded:
        raise StoreError(
            "this SQLite cannot load sqlite-vec; reinstall EdgeDesk "
            "(the sqlcipher3 package provides one that can)"
        )
    database.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {vec_table(collection_id)} "
        f"USING vec0(embedding float[{int(dimension)}] distance_metric=cosine)"
    )


def drop_vec_table(database: Database, collection_id: int) -> None:
    """Remove a collection's vectors (when it is deleted or re-embedded)."""
    database.execute(f"DROP TABLE IF EXISTS {vec_table(collection_id)}")


def _collections(
    database: Database, names: Sequence[str] | None
) -> list[tuple[int, str, str | None, int | None]]:
    rows = database.query(
        "SELECT id, name, embedding_model, dimension FROM collections ORDER BY name"
    )
    if names is None:
        return [tuple(r) for r in rows]
    known = {r[1]: tuple(r) for r in rows}
    missing = [n for n in names if n not in known]
    if missing:
        raise InvalidRequest(f"no collection named '{missing[0]}'; see 'edgedesk docs list'")
    return [known[n] for n in names]


def vector_ranking(
    database: Database, collection_id: int, vector: Sequence[float], limit: int
) -> list[int]:
    """Chunk ids nearest to ``vector`` in one collection by an exact scan, nearest first."""
    return exact_ranking(database, collection_id, vector, limit)


def keyword_query(query: str) -> str | None:
    """The FTS5 MATCH expression for ``query``: any of its content words (None: none)."""
    terms = search_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + " ".join(fts_text(t).split()) + '"' for t in terms)


def keyword_ranking(
    database: Database, collection_ids: Sequence[int], query: str, limit: int
) -> list[int]:
    """Chunk ids matching any content word of ``query`` in the collections, best first."""
    return [chunk_id for chunk_id, _ in keyword_scores(database, collection_ids, query, limit)]


def keyword_scores(
    database: Database, collection_ids: Sequence[int], query: str, limit: int
) -> list[tuple[int, float]]:
    """(chunk id, BM25 score, higher is better) for the best keyword matches."""
    match = keyword_query(query)
    if match is None or not collection_ids:
        return []
    every = database.query("SELECT count(*) FROM collections")[0][0]
    if len(set(collection_ids)) >= every:
        # Searching every collection (the common case: one): no join to filter by it.
        # A common word matches tens of thousands of chunks at 100k, and the join per
        # match was about half the keyword search's time (p95 60 -> 36 ms).
        every_sql = (
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY bm25(chunks_fts) LIMIT ?"
        )
        rows = database.query(every_sql, (match, limit))
    else:
        marks = ",".join("?" * len(collection_ids))
        sql = (
            "SELECT f.rowid, bm25(chunks_fts) FROM chunks_fts f "  # noqa: S608
            "JOIN chunks c ON c.id = f.rowid "
            f"WHERE chunks_fts MATCH ? AND c.collection_id IN ({marks}) "
            "ORDER BY bm25(chunks_fts) LIMIT ?"
        )
        rows = database.query(sql, (match, *collection_ids, limit))
    # SQLite's bm25() is negative, more negative for better matches.
    return [(int(r[0]), -float(r[1])) for r in rows]


def cosine_similarities(
    database: Database, vector: Sequence[float], chunk_ids: Sequence[int]
) -> dict[int, float]:
    """Exact cosine similarity of ``vector`` to each of the chunks (of one model)."""
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    # By primary key only: a collection_id condition made SQLite scan the collection's
    # index (100,000 rows) instead of looking up the few ids (ids are unique anyway).
    rows = database.query(
        "SELECT chunk_id, vec_distance_cosine(embedding, ?) FROM chunk_bits "  # noqa: S608
        f"WHERE chunk_id IN ({marks})",
        (to_blob(vector), *chunk_ids),
    )
    return {int(i): 1.0 - float(d) for i, d in rows if d is not None}


def normalised(scores: dict[int, float]) -> dict[int, float]:
    """Scores min-max scaled to 0..1 (all equal: all 1)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low < 1e-9:
        return dict.fromkeys(scores, 1.0)
    return {i: (v - low) / (high - low) for i, v in scores.items()}


def coverage(terms: Sequence[str]) -> Callable[[str], float]:
    """A scorer of the share of ``terms`` (the query's content words) a text contains."""
    unique = list(dict.fromkeys(terms))
    words = sorted((t for t in unique if not is_cjk(t)), key=len, reverse=True)
    runs = [t for t in unique if is_cjk(t)]
    # One scan for the query's words as whole words (a \w+ run equal to the word), not
    # a split of the whole text into a set: 50 keyword hits cost 3 ms that way at 100k.
    whole = (
        re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")(?!\w)") if words else None
    )

    def share(text: str) -> float:
        if not unique:
            return 0.0
        lower = text.lower()
        found = len(set(whole.findall(lower))) if whole is not None else 0
        if runs:
            flat = re.sub(r"\s+", "", lower)  # a Chinese word may wrap across lines
            found += sum(1 for r in runs if r in flat)
        return found / len(unique)

    return share


def hybrid_scores(
    vector: dict[int, float],
    keyword: Sequence[tuple[int, float]],
    covered: dict[int, float],
    weight: float = KEYWORD_WEIGHT,
    *,
    gated: bool = True,
) -> dict[int, float]:
    """Normalised vector score plus weighted (coverage-gated) relative BM25 per chunk.

    ``covered`` is each chunk's share of the query's content words; a chunk with all of
    them also gets ``FULL_MATCH_BONUS``. ``gated=False`` weighs BM25 without the share.
    """
    scores = dict(vector)
    best = max((b for _, b in keyword), default=0.0)
    for chunk_id, bm25 in keyword:
        relative = bm25 / best if best > 0 else 0.0
        share = covered.get(chunk_id, 0.0)
        scores[chunk_id] = (
            scores.get(chunk_id, 0.0)
            + weight * relative * (share if gated else 1.0)
            + (FULL_MATCH_BONUS if share >= 1.0 else 0.0)
        )
    return scores


class Searcher:
    """Hybrid search over one or more collections of the shared database."""

    def __init__(
        self, database: Database, embed: EmbedFn, reranker: Reranker | None = None
    ) -> None:
        self.database = database
        self.embed = embed
        self.reranker = reranker
        self.vectors = VectorIndex(database)

    def search(
        self,
        query: str,
        collections: Sequence[str] | None = None,
        *,
        k: int = 8,
        candidates: int = 50,
        cancel: threading.Event | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``; all collections when none are named.

        A query over MAX_QUERY_CHARS is refused (InvalidRequest) before any work: a
        1 MB query once held the CPU for minutes and other searches behind it. ``cancel``
        set (its client left) stops the query's embedding between decodes (Cancelled).
        """
        if not query.strip():
            raise InvalidRequest("the search query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidRequest(
                f"the search query is {len(query)} characters; a search takes at most "
                f"{MAX_QUERY_CHARS}; search for its key words or a shorter passage",
                param="query",
            )
        chosen = _collections(self.database, collections)
        vectors: dict[str, list[float]] = {}
        vec_ranks: dict[int, int] = {}
        known: dict[int, float] = {}  # exact similarities the vector stage computed
        for cid, _, model, dimension in chosen:
            if model is None or dimension is None:
                continue  # nothing indexed yet
            if model not in vectors:
                vectors[model] = self.embed(model, [query], cancel)[0]
            ranking = self.vectors.scored(cid, vectors[model], candidates, wanted=k)
            for rank, (chunk_id, similarity) in enumerate(ranking, start=1):
                vec_ranks[chunk_id] = min(rank, vec_ranks.get(chunk_id, rank))
                if similarity is not None:
                    known[chunk_id] = similarity
        with self.database.lock:
            keywords = keyword_scores(self.database, [c[0] for c in chosen], query, candidates)
        rows = self._rows(list(dict.fromkeys([*vec_ranks, *(i for i, _ in keywords)])))
        vector_scores: dict[int, float] = {}
        for _, name, model, dimension in chosen:
            if model is None or dimension is None:
                continue
            # Keyword-only candidates get their exact similarity too, and each
            # collection is normalised on its own (its model's cosines are its own).
            ids = [i for i, row in rows.items() if row[1] == name]
            cosines = {i: known[i] for i in ids if i in known}
            with self.database.lock:
                cosines.update(
                    cosine_similarities(
                        self.database, vectors[model], [i for i in ids if i not in known]
                    )
                )
            vector_scores.update(normalised(cosines))
        terms = search_terms(query)
        share = coverage(terms)
        covered = {i: share(rows[i][6]) for i, _ in keywords if i in rows}
        cjk = any(is_cjk(t) for t in terms)
        scores = hybrid_scores(
            vector_scores,
            keywords,
            covered,
            CJK_KEYWORD_WEIGHT if cjk else KEYWORD_WEIGHT,
            gated=not cjk,
        )
        key_ranks = {chunk_id: rank for rank, (chunk_id, _) in enumerate(keywords, start=1)}
        # Only the hits returned (or reranked) become Hit objects.
        order = sorted(rows, key=lambda i: (-scores.get(i, 0.0), i))
        hits = [
            Hit(
                i,
                *rows[i][1:],
                score=scores.get(i, 0.0),
                vector_rank=vec_ranks.get(i),
                keyword_rank=key_ranks.get(i),
            )
            for i in order[: max(k, candidates if self.reranker else k)]
        ]
        if self.reranker is not None and hits:
            rescored = self.reranker(query, [h.text for h in hits])
            hits = [
                replace(h, score=float(s))
                for h, s in sorted(zip(hits, rescored, strict=True), key=lambda p: -p[1])
            ]
        return hits[:k]

    def _rows(
        self, chunk_ids: Sequence[int]
    ) -> dict[int, tuple[int, str, str, int | None, int, int, str]]:
        """Each chunk's (id, collection, path, page, first line, last line, text)."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        sql = (
            "SELECT c.id, k.name, d.path, c.page, c.line_start, c.line_end, c.text "  # noqa: S608
            "FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"JOIN collections k ON k.id = c.collection_id WHERE c.id IN ({marks})"
        )
        with self.database.lock:
            found = self.database.query(sql, list(chunk_ids))
        enclosed = self._enclosed({r[1] for r in found})
        return {
            int(r[0]): (int(r[0]), r[1], r[2], r[3], int(r[4]), int(r[5]), r[6])
            for r in found
            if still_inside(fs_path(r[2]), enclosed.get(r[1], []))
        }

    def _enclosed(self, names: set[str]) -> dict[str, list[str]]:
        """The real folders (links resolved) each named collection indexes.

        A passage is read only while its file still lies in one of them, checked by
        opening it by handle (``_handles.still_inside``): a file swapped for a link out of
        the folder after indexing (``passwd.txt -> /etc/passwd``), or under a folder
        swapped so, is not read through search or ``read_document_passage`` (the next
        scan drops it).
        """
        if not names:
            return {}
        marks = ",".join("?" * len(names))
        with self.database.lock:
            found = self.database.query(
                "SELECT k.name, r.path FROM collection_roots r "  # noqa: S608
                f"JOIN collections k ON k.id = r.collection_id WHERE k.name IN ({marks})",
                sorted(names),
            )
        roots: dict[str, list[str]] = {}
        for name, path in found:
            roots.setdefault(name, []).append(real_root(fs_path(path)))
        return roots

    def fetch(self, chunk_ids: Sequence[int]) -> list[Hit]:
        """The stored chunks with these ids (score 0), in no particular order."""
        return [Hit(*row, score=0.0) for row in self._rows(chunk_ids).values()]
