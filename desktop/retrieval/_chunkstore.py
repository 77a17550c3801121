"""Storing a file's chunks: text, full-text index, vectors and sign bits, batch by batch.

Vectors of chunks whose text (hash) is already stored in the collection are reused, not
embedded again; a file bigger than one batch is committed as it goes, marked ``PARTIAL``
until its last batch, so an interrupted scan keeps its work and the next one finishes it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from desktop.base.errors import InvalidRequest
from desktop.retrieval._chunking import Passage
from desktop.retrieval._embedder import Embedder
from desktop.retrieval._fsnames import path_text
from desktop.retrieval._reports import IndexReport
from desktop.retrieval._search import ensure_vec_table, to_blob, vec_table
from desktop.store import Database, fts_text

PARTIAL = ""  # the hash of a document whose chunks are still being stored


class ChunkStore:
    """Writes documents' chunks into the shared database; the Library's scanning thread only.

    Called inside the collection's scan lock, so no two writers store the same collection.
    """

    def __init__(self, database: Database, batch_size: int) -> None:
        self.database = database
        self.batch_size = batch_size

    def delete_document(self, cid: int, doc_id: int) -> None:
        """Remove a document, its chunks and their vectors (inside the caller's transaction)."""
        if self.database.query("SELECT 1 FROM sqlite_master WHERE name = ?", (vec_table(cid),)):
            self.database.execute(
                f"DELETE FROM {vec_table(cid)} WHERE rowid IN "  # noqa: S608
                "(SELECT id FROM chunks WHERE document_id = ?)",
                (doc_id,),
            )
        self.database.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def _reusable(self, cid: int, chunks: Sequence[Passage]) -> dict[str, bytes]:
        """Stored vectors of chunks with the same text (hash), found before anything moves."""
        reused: dict[str, bytes] = {}
        if self.database.query("SELECT 1 FROM sqlite_master WHERE name = ?", (vec_table(cid),)):
            for chunk in chunks:
                if chunk.hash in reused:
                    continue
                rows = self.database.query(
                    f"SELECT v.embedding FROM chunks c JOIN {vec_table(cid)} v "  # noqa: S608
                    "ON v.rowid = c.id WHERE c.collection_id = ? AND c.hash = ? LIMIT 1",
                    (cid, chunk.hash),
                )
                if rows:
                    reused[chunk.hash] = bytes(rows[0][0])
        return reused

    def store_in_batches(
        self,
        cid: int,
        path: Path,
        *,
        stat: os.stat_result,
        digest: str,
        known: tuple[int, int, float, str] | None,
        chunks: Sequence[Passage],
        embedder: Embedder,
        report: IndexReport,
        cancel: threading.Event | None,
        tick: Callable[[], None],
    ) -> bool:
        """Embed and store ``chunks`` a batch at a time, each batch its own commit.

        A file of one batch replaces its old version in one transaction. A bigger one
        is kept as it goes (searchable, marked PARTIAL so the next scan finishes it):
        a 45 MB one-line text embeds for a long while, and an interrupt must not throw
        that work away. True when the whole file is stored.
        """
        vectors = self._reusable(cid, chunks)
        report.chunks_reused += sum(1 for c in chunks if c.hash in vectors)
        doc_id: int | None = None
        starts = range(0, len(chunks), self.batch_size) if chunks else range(1)
        for start in starts:
            if cancel is not None and cancel.is_set():
                report.cancelled = True
                return False
            batch = chunks[start : start + self.batch_size]
            todo = list(dict.fromkeys(c.hash for c in batch if c.hash not in vectors))
            if todo:
                texts = {c.hash: c.text for c in batch}
                embedded = embedder.embed([texts[h] for h in todo])
                self._check_dimension(cid, len(embedded[0]), embedder.model)
                vectors.update({h: to_blob(v) for h, v in zip(todo, embedded, strict=True)})
                report.chunks_embedded += len(todo)
            last = start + self.batch_size >= len(chunks)
            with self.database.transaction():
                if doc_id is None:
                    if known is not None:
                        self.delete_document(cid, known[0])
                    cur = self.database.execute(
                        "INSERT INTO documents(collection_id, path, size, mtime, hash, indexed) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            cid,
                            path_text(path),
                            stat.st_size,
                            stat.st_mtime if last else -1.0,
                            digest if last else PARTIAL,
                            time.time(),
                        ),
                    )
                    doc_id = int(cur.lastrowid)
                elif last:
                    self.database.execute(
                        "UPDATE documents SET mtime = ?, hash = ? WHERE id = ?",
                        (stat.st_mtime, digest, doc_id),
                    )
                for ordinal, chunk in enumerate(batch, start=start):
                    self._insert_chunk(cid, doc_id, ordinal, chunk, vectors[chunk.hash])
            if not last:
                tick()
        return True

    def _check_dimension(self, cid: int, dimension: int, model: str) -> None:
        with self.database.transaction():
            recorded = self.database.query(
                "SELECT dimension FROM collections WHERE id = ?", (cid,)
            )[0][0]
            if recorded is None:
                self.database.execute(
                    "UPDATE collections SET dimension = ? WHERE id = ?", (dimension, cid)
                )
                ensure_vec_table(self.database, cid, dimension)
            elif recorded != dimension:
                raise InvalidRequest(
                    f"{model} makes {dimension}-dimensional vectors but this collection was "
                    f"built with {recorded}; add it again with --embedding-model to re-index"
                )

    def _insert_chunk(
        self, cid: int, doc_id: int, ordinal: int, chunk: Passage, blob: bytes
    ) -> None:
        cur = self.database.execute(
            "INSERT INTO chunks(collection_id, document_id, ordinal, page, line_start, "
            "line_end, hash, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cid,
                doc_id,
                ordinal,
                chunk.page,
                chunk.line_start,
                chunk.line_end,
                chunk.hash,
                chunk.text,
            ),
        )
        chunk_id = int(cur.lastrowid)
        self.database.execute(
            "INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (chunk_id, fts_text(chunk.text))
        )
        self.database.execute(
            f"INSERT INTO {vec_table(cid)}(rowid, embedding) VALUES (?, ?)",  # noqa: S608
            (chunk_id, blob),
        )
        # The sign bits the two-stage search scans first (retrieval._vectors).
        self.database.execute(
            "INSERT INTO chunk_bits(chunk_id, collection_id, bits, "
            "embedding) VALUES (?, ?, vec_quantize_binary(?), ?)",
            (chunk_id, cid, blob, blob),
        )
