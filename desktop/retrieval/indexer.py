"""Document collections and their incremental index.

A collection is a set of folders and files ("roots") plus the embedding model it was
built with. ``rescan`` brings the index in line with the disk: unchanged files are not
read (size and mtime), changed files whose bytes are the same are not re-chunked (hash),
chunks whose text is unchanged reuse their stored vector, and files that vanished leave
the index. Every file is committed on its own, a big one batch by batch, so a cancel or
a crash loses at most one batch: a file left half-indexed is marked changed and the next
scan finishes it, reusing every vector already stored. One scan at a time per collection,
across processes (the window and a terminal): a file lock in the data folder serialises
them. Blocking, with a progress callback and a cancel event.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from desktop.errors import InvalidRequest
from desktop.filebytes import sha256_file
from desktop.retrieval import loaders
from desktop.retrieval.chunking import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_OVERLAP_TOKENS,
    TextChunk,
    chunk_blocks,
)
from desktop.retrieval.fsnames import fs_path, path_text, walk
from desktop.retrieval.scanlock import collection_lock
from desktop.retrieval.search import drop_vec_table, ensure_vec_table, to_blob, vec_table
from desktop.store.db import Database, fts_text

if TYPE_CHECKING:
    from desktop.engine.scheduler import Engine

T = TypeVar("T")


class Embedder(Protocol):
    """An embedding model: vectors and token counts for many texts per call."""

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one per text."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """The model's token count of each text."""
        ...


class _EngineScheduler(Protocol):
    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]: ...
    def with_engine(self, model: str, work: Callable[[Engine], T]) -> T: ...


@dataclass
class SchedulerEmbedder:
    """An Embedder backed by the app's Scheduler (the model is loaded on first use)."""

    scheduler: _EngineScheduler
    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors from the engine, batched in one scheduler turn."""
        return self.scheduler.embed(self.model, texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts with the model's own tokenizer, in one scheduler turn."""
        def work(engine: Engine) -> list[int]:
            return [len(engine.tokenize(t, add_bos=False, special=False)) for t in texts]
        return self.scheduler.with_engine(self.model, work)


@dataclass(frozen=True)
class SkippedFile:
    """A file left out of the index, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class IndexProgress:
    """Where an indexing run is: files done of total, the file now, chunks embedded."""

    files_done: int
    files_total: int
    path: str | None
    chunks_embedded: int
    waiting: bool = False  # another process (or window) is indexing this collection


@dataclass
class IndexReport:
    """What a (re)scan changed."""

    collection: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    cancelled: bool = False


@dataclass(frozen=True)
class CollectionInfo:
    """A collection as the documents view lists it."""

    name: str
    embedding_model: str | None
    dimension: int | None
    roots: tuple[str, ...]
    documents: int
    chunks: int
    skipped: tuple[SkippedFile, ...]


ProgressFn = Callable[[IndexProgress], None]
PARTIAL = ""  # the hash of a document whose chunks are still being stored


class Library:
    """The document collections in the shared database, and their indexing."""

    def __init__(self, database: Database, embedder_for: Callable[[str], Embedder], *,
                 default_model: str, max_tokens: int = DEFAULT_MAX_TOKENS,
                 overlap_tokens: int = DEFAULT_OVERLAP_TOKENS, batch_size: int = 32,
                 max_file_bytes: int = loaders.DEFAULT_MAX_BYTES,
                 lock_dir: Path | None = None,
                 check_model: Callable[[str], None] | None = None) -> None:
        self.database = database
        self.embedder_for = embedder_for
        self.default_model = default_model
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self.batch_size = batch_size
        self.max_file_bytes = max_file_bytes
        self.lock_dir = lock_dir  # None: no other process shares this database
        self.check_model = check_model  # raises if a model cannot embed (missing, a chat model)

    # ------------------------------------------------------------------ collections
    def _row(self, name: str) -> tuple[int, str | None, int | None] | None:
        rows = self.database.query(
            "SELECT id, embedding_model, dimension FROM collections WHERE name = ?", (name,))
        return (int(rows[0][0]), rows[0][1], rows[0][2]) if rows else None

    def collections(self) -> list[CollectionInfo]:
        """Every collection with its counts and the files last skipped."""
        infos = []
        for cid, name, model, dim in self.database.query(
                "SELECT id, name, embedding_model, dimension FROM collections ORDER BY name"):
            roots = tuple(r[0] for r in self.database.query(
                "SELECT path FROM collection_roots WHERE collection_id = ? ORDER BY path", (cid,)))
            docs = self.database.query("SELECT count(*) FROM documents WHERE collection_id = ?",
                                       (cid,))[0][0]
            chunks = self.database.query("SELECT count(*) FROM chunks WHERE collection_id = ?",
                                         (cid,))[0][0]
            skipped = tuple(SkippedFile(p, r) for p, r in self.database.query(
                "SELECT path, reason FROM skipped_files WHERE collection_id = ? ORDER BY path",
                (cid,)))
            infos.append(CollectionInfo(name, model, dim, roots, int(docs), int(chunks), skipped))
        return infos

    def add(self, name: str, paths: Sequence[Path], model: str | None = None, *,
            progress: ProgressFn | None = None,
            cancel: threading.Event | None = None) -> IndexReport:
        """Add folders/files to collection ``name`` (created if new) and bring it up to date.

        A different ``model`` than the collection was built with re-embeds all of it.
        """
        if not name.strip():
            raise InvalidRequest("a collection needs a name")
        for path in paths:
            if not path.exists():
                raise InvalidRequest(f"no such file or folder: {path_text(path)}")
        with self._scan_lock(name, progress, cancel):
            row = self._row(name)
            if self.check_model is not None and (row is None or model is not None):
                # Before anything is recorded: a bad model must not leave an empty
                # collection behind (nor reach the engine as an embedder).
                self.check_model(model or (row[1] if row else None) or self.default_model)
            self._record(name, paths, model)
            return self._rescan(name, progress=progress, cancel=cancel)

    def _record(self, name: str, paths: Sequence[Path], model: str | None) -> None:
        with self.database.transaction():
            row = self._row(name)
            if row is None:
                self.database.execute("INSERT INTO collections(name, embedding_model, created) "
                                      "VALUES (?, ?, ?)",
                                      (name, model or self.default_model, time.time()))
            elif model is not None and row[1] != model:
                self._reset_vectors(row[0], model)
            cid = self._row(name)[0]  # type: ignore[index]
            for path in paths:
                self.database.execute("INSERT OR IGNORE INTO collection_roots VALUES (?, ?)",
                                      (cid, path_text(path.expanduser().resolve())))

    @contextmanager
    def _scan_lock(self, name: str, progress: ProgressFn | None,
                   cancel: threading.Event | None) -> Iterator[None]:
        """Hold collection ``name``'s lock (``scanlock``); a wait is reported via progress."""
        if self.lock_dir is None:
            yield
            return

        def waiting() -> None:
            if progress is not None:
                progress(IndexProgress(0, 0, None, 0, waiting=True))
        with collection_lock(self.lock_dir, name, on_wait=waiting, cancel=cancel):
            yield

    def _reset_vectors(self, cid: int, model: str) -> None:
        """Forget every vector of a collection; the next scan re-embeds with ``model``."""
        drop_vec_table(self.database, cid)
        self.database.execute("DELETE FROM documents WHERE collection_id = ?", (cid,))
        self.database.execute("UPDATE collections SET embedding_model = ?, dimension = NULL "
                              "WHERE id = ?", (model, cid))

    def remove(self, name: str) -> bool:
        """Delete a collection and its index (never the files); True if it existed."""
        with self.database.transaction():
            row = self._row(name)
            if row is None:
                return False
            drop_vec_table(self.database, row[0])
            self.database.execute("DELETE FROM collections WHERE id = ?", (row[0],))
        return True

    # ------------------------------------------------------------------ scanning
    def rescan_all(self, *, progress: ProgressFn | None = None,
                   cancel: threading.Event | None = None) -> list[IndexReport]:
        """Rescan every collection (at start, so edits made while closed are picked up)."""
        return [self.rescan(c.name, progress=progress, cancel=cancel)
                for c in self.collections()]

    def rescan(self, name: str, *, progress: ProgressFn | None = None,
               cancel: threading.Event | None = None) -> IndexReport:
        """Bring collection ``name`` in line with the files on disk."""
        with self._scan_lock(name, progress, cancel):
            return self._rescan(name, progress=progress, cancel=cancel)

    def _rescan(self, name: str, *, progress: ProgressFn | None,
                cancel: threading.Event | None) -> IndexReport:
        row = self._row(name)
        if row is None:
            raise InvalidRequest(
                f"no collection named '{name}'; add files with 'edgedesk docs add'")
        cid, model, _ = row
        embedder = self.embedder_for(model or self.default_model)
        report = IndexReport(name)
        roots = [fs_path(r[0]) for r in self.database.query(
            "SELECT path FROM collection_roots WHERE collection_id = ?", (cid,))]
        unreadable: list[tuple[Path, str]] = []
        files = sorted(set(walk(roots, unreadable)))
        known = {r[0]: (int(r[1]), int(r[2]), float(r[3]), r[4]) for r in self.database.query(
            "SELECT path, id, size, mtime, hash FROM documents WHERE collection_id = ?", (cid,))}
        present = {path_text(f) for f in files}
        gone = [known[p][0] for p in known if p not in present]
        with self.database.transaction():
            for doc_id in gone:
                self._delete_document(cid, doc_id)
            self.database.execute("DELETE FROM skipped_files WHERE collection_id = ?", (cid,))
        report.removed = len(gone)
        for folder, reason in unreadable:
            self._skip(cid, folder, reason, report, None)
        for done, path in enumerate(files):
            if cancel is not None and cancel.is_set():
                report.cancelled = True
                break

            def tick(done: int = done, path: Path = path) -> None:
                if progress is not None:
                    progress(IndexProgress(done, len(files), path_text(path),
                                           report.chunks_embedded))
            tick()
            self._index_file(cid, path, known=known.get(path_text(path)), embedder=embedder,
                             report=report, cancel=cancel, tick=tick)
        if progress is not None and not report.cancelled:
            progress(IndexProgress(len(files), len(files), None, report.chunks_embedded))
        return report

    def _delete_document(self, cid: int, doc_id: int) -> None:
        if self.database.query("SELECT 1 FROM sqlite_master WHERE name = ?", (vec_table(cid),)):
            self.database.execute(f"DELETE FROM {vec_table(cid)} WHERE rowid IN "  # noqa: S608
                                  "(SELECT id FROM chunks WHERE document_id = ?)", (doc_id,))
        self.database.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def _skip(self, cid: int, path: Path, reason: str, report: IndexReport,
              known: tuple[int, int, float, str] | None) -> None:
        reason = path_text(reason)  # it may quote the file's name
        report.skipped.append(SkippedFile(path_text(path), reason))
        with self.database.transaction():
            if known is not None:  # an indexed file that became unreadable: drop stale text
                self._delete_document(cid, known[0])
                report.removed += 1
            self.database.execute("INSERT OR REPLACE INTO skipped_files VALUES (?, ?, ?, ?)",
                                  (cid, path_text(path), reason, time.time()))

    def _index_file(self, cid: int, path: Path, *, known: tuple[int, int, float, str] | None,
                    embedder: Embedder, report: IndexReport,
                    cancel: threading.Event | None, tick: Callable[[], None]) -> None:
        try:
            stat = path.stat()
        except OSError as exc:
            self._skip(cid, path, f"cannot read ({exc.strerror})", report, known)
            return
        if known is not None and known[1] == stat.st_size and known[2] == stat.st_mtime:
            report.unchanged += 1
            return
        try:
            # Type and size first: a folder's images and archives are never read in full.
            loaders.check(path, stat.st_size, max_bytes=self.max_file_bytes)
            digest = sha256_file(path)
            if known is not None and digest == known[3]:
                with self.database.transaction():
                    self.database.execute("UPDATE documents SET mtime = ? WHERE id = ?",
                                          (stat.st_mtime, known[0]))
                report.unchanged += 1
                return
            blocks = loaders.load(path, max_bytes=self.max_file_bytes)
        except loaders.SkipFile as exc:
            self._skip(cid, path, exc.reason, report, known)
            return
        except OSError as exc:
            self._skip(cid, path, f"cannot read ({exc.strerror})", report, known)
            return
        chunks = chunk_blocks(blocks, embedder.count_tokens, max_tokens=self.max_tokens,
                              overlap_tokens=self.overlap_tokens)
        if self._store_in_batches(cid, path, stat=stat, digest=digest, known=known,
                                  chunks=chunks, embedder=embedder, report=report,
                                  cancel=cancel, tick=tick):
            if known is None:
                report.added += 1
            else:
                report.updated += 1

    def _reusable(self, cid: int, chunks: Sequence[TextChunk]) -> dict[str, bytes]:
        """Stored vectors of chunks with the same text (hash), found before anything moves."""
        reused: dict[str, bytes] = {}
        if self.database.query("SELECT 1 FROM sqlite_master WHERE name = ?", (vec_table(cid),)):
            for chunk in chunks:
                if chunk.hash in reused:
                    continue
                rows = self.database.query(
                    f"SELECT v.embedding FROM chunks c JOIN {vec_table(cid)} v "  # noqa: S608
                    "ON v.rowid = c.id WHERE c.collection_id = ? AND c.hash = ? LIMIT 1",
                    (cid, chunk.hash))
                if rows:
                    reused[chunk.hash] = bytes(rows[0][0])
        return reused

    def _store_in_batches(self, cid: int, path: Path, *, stat: os.stat_result, digest: str,
                          known: tuple[int, int, float, str] | None,
                          chunks: Sequence[TextChunk], embedder: Embedder,
                          report: IndexReport, cancel: threading.Event | None,
                          tick: Callable[[], None]) -> bool:
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
                        self._delete_document(cid, known[0])
                    cur = self.database.execute(
                        "INSERT INTO documents(collection_id, path, size, mtime, hash, indexed) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (cid, path_text(path), stat.st_size,
                         stat.st_mtime if last else -1.0, digest if last else PARTIAL,
                         time.time()))
                    doc_id = int(cur.lastrowid)
                elif last:
                    self.database.execute("UPDATE documents SET mtime = ?, hash = ? WHERE id = ?",
                                          (stat.st_mtime, digest, doc_id))
                for ordinal, chunk in enumerate(batch, start=start):
                    self._insert_chunk(cid, doc_id, ordinal, chunk, vectors[chunk.hash])
            if not last:
                tick()
        return True

    def _check_dimension(self, cid: int, dimension: int, model: str) -> None:
        with self.database.transaction():
            recorded = self.database.query("SELECT dimension FROM collections WHERE id = ?",
                                           (cid,))[0][0]
            if recorded is None:
                self.database.execute("UPDATE collections SET dimension = ? WHERE id = ?",
                                      (dimension, cid))
                ensure_vec_table(self.database, cid, dimension)
            elif recorded != dimension:
                raise InvalidRequest(
                    f"{model} makes {dimension}-dimensional vectors but this collection was "
                    f"built with {recorded}; add it again with --embedding-model to re-index")

    def _insert_chunk(self, cid: int, doc_id: int, ordinal: int, chunk: TextChunk,
                      blob: bytes) -> None:
        cur = self.database.execute(
            "INSERT INTO chunks(collection_id, document_id, ordinal, page, line_start, "
            "line_end, hash, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (cid, doc_id, ordinal, chunk.page, chunk.line_start, chunk.line_end,
             chunk.hash, chunk.text))
        chunk_id = int(cur.lastrowid)
        self.database.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)",
                              (chunk_id, fts_text(chunk.text)))
        self.database.execute(
            f"INSERT INTO {vec_table(cid)}(rowid, embedding) VALUES (?, ?)",  # noqa: S608
            (chunk_id, blob))
        # The sign bits the two-stage search scans first (retrieval.vectors).
        self.database.execute("INSERT INTO chunk_bits(chunk_id, collection_id, bits, "
                              "embedding) VALUES (?, ?, vec_quantize_binary(?), ?)",
                              (chunk_id, cid, blob, blob))
