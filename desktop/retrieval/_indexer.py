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

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from desktop.base.config import user_path
from desktop.base.errors import InvalidRequest
from desktop.retrieval import _loaders as loaders
from desktop.retrieval._chunking import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS, chunk_blocks
from desktop.retrieval._chunkstore import PARTIAL, ChunkStore
from desktop.retrieval._embedder import Embedder, SchedulerEmbedder
from desktop.retrieval._fsnames import (
    fs_path,
    is_link,
    outside_reason,
    path_text,
    real_root,
    root_link_reason,
    walk,
    within,
)
from desktop.retrieval._handles import Opened, Refused, hard_link_reason, open_inside
from desktop.retrieval._reports import (
    FILES_LISTED,
    CollectionInfo,
    IndexProgress,
    IndexReport,
    ProgressFn,
    SkippedFile,
)
from desktop.retrieval._scanlock import collection_lock
from desktop.retrieval._search import drop_vec_table
from desktop.store import Database

# Callers import these from here, as before the module was split.
__all__ = [
    "PARTIAL",
    "CollectionInfo",
    "Embedder",
    "IndexProgress",
    "IndexReport",
    "Library",
    "SchedulerEmbedder",
    "SkippedFile",
]


class Library:
    """The document collections in the shared database, and their indexing.

    Blocking calls for a worker thread (never the window's); scans of one collection are
    serialised by its scan lock, and each file's chunks are written by ``ChunkStore``.
    """

    def __init__(
        self,
        database: Database,
        embedder_for: Callable[[str], Embedder],
        *,
        default_model: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
        batch_size: int = 32,
        max_file_bytes: int = loaders.DEFAULT_MAX_BYTES,
        lock_dir: Path | None = None,
        check_model: Callable[[str], None] | None = None,
        allow_hard_links: Callable[[], bool] = lambda: False,
    ) -> None:
        self.database = database
        self.embedder_for = embedder_for
        self.default_model = default_model
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self.store = ChunkStore(database, batch_size)
        self.max_file_bytes = max_file_bytes
        self.lock_dir = lock_dir  # None: no other process shares this database
        self.check_model = check_model  # raises if a model cannot embed (missing, a chat model)
        # ``documents.allow_hard_links``, read at each file (a settings change applies at once)
        self.allow_hard_links = allow_hard_links

    # ------------------------------------------------------------------ collections
    def _row(self, name: str) -> tuple[int, str | None, int | None] | None:
        rows = self.database.query(
            "SELECT id, embedding_model, dimension FROM collections WHERE name = ?", (name,)
        )
        return (int(rows[0][0]), rows[0][1], rows[0][2]) if rows else None

    def collections(self) -> list[CollectionInfo]:
        """Every collection with its counts and the files last skipped."""
        infos = []
        for cid, name, model, dim in self.database.query(
            "SELECT id, name, embedding_model, dimension FROM collections ORDER BY name"
        ):
            roots = tuple(
                r[0]
                for r in self.database.query(
                    "SELECT path FROM collection_roots WHERE collection_id = ? ORDER BY path",
                    (cid,),
                )
            )
            docs = self.database.query(
                "SELECT count(*) FROM documents WHERE collection_id = ?", (cid,)
            )[0][0]
            chunks = self.database.query(
                "SELECT count(*) FROM chunks WHERE collection_id = ?", (cid,)
            )[0][0]
            skipped = tuple(
                SkippedFile(p, r)
                for p, r in self.database.query(
                    "SELECT path, reason FROM skipped_files WHERE collection_id = ? ORDER BY path",
                    (cid,),
                )
            )
            files = tuple(
                r[0]
                for r in self.database.query(
                    "SELECT path FROM documents WHERE collection_id = ? ORDER BY path LIMIT ?",
                    (cid, FILES_LISTED),
                )
            )
            infos.append(
                CollectionInfo(name, model, dim, roots, int(docs), int(chunks), skipped, files)
            )
        return infos

    def add(
        self,
        name: str,
        paths: Sequence[Path],
        model: str | None = None,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexReport:
        """Add folders/files to collection ``name`` (created if new) and bring it up to date.

        A different ``model`` than the collection was built with re-embeds all of it.
        """
        if not name.strip():
            raise InvalidRequest("a collection needs a name")
        for path in paths:
            if not path.exists():
                raise InvalidRequest(f"no such file or folder: {path_text(path)}")
            self._refuse_swapped_root(path)
        with self._scan_lock(name, progress, cancel):
            row = self._row(name)
            if self.check_model is not None and (row is None or model is not None):
                # Before anything is recorded: a bad model must not leave an empty
                # collection behind (nor reach the engine as an embedder).
                self.check_model(model or (row[1] if row else None) or self.default_model)
            self._record(name, paths, model)
            return self._rescan(name, progress=progress, cancel=cancel)

    def _refuse_swapped_root(self, path: Path) -> None:
        """InvalidRequest when ``path`` is a link standing where an indexed root was: added
        again, it would be resolved to wherever the link leads and indexed as a new root."""
        own = Path(os.path.abspath(user_path(path)))
        if not is_link(own):
            return
        place = path_text(Path(real_root(own)))
        if self.database.query("SELECT 1 FROM collection_roots WHERE path = ?", (place,)):
            raise InvalidRequest(root_link_reason(own))

    def _record(self, name: str, paths: Sequence[Path], model: str | None) -> None:
        with self.database.transaction():
            row = self._row(name)
            if row is None:
                self.database.execute(
                    "INSERT INTO collections(name, embedding_model, created) VALUES (?, ?, ?)",
                    (name, model or self.default_model, time.time()),
                )
            elif model is not None and row[1] != model:
                self._reset_vectors(row[0], model)
            cid = self._row(name)[0]  # type: ignore[index]
            for path in paths:
                self.database.execute(
                    "INSERT OR IGNORE INTO collection_roots VALUES (?, ?)",
                    (cid, path_text(user_path(path).resolve())),
                )

    @contextmanager
    def _scan_lock(
        self, name: str, progress: ProgressFn | None, cancel: threading.Event | None
    ) -> Iterator[None]:
        """Hold collection ``name``'s lock (``_scanlock``); a wait is reported via progress."""
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
        self.database.execute(
            "UPDATE collections SET embedding_model = ?, dimension = NULL WHERE id = ?",
            (model, cid),
        )

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
    def rescan(
        self,
        name: str,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexReport:
        """Bring collection ``name`` in line with the files on disk."""
        with self._scan_lock(name, progress, cancel):
            return self._rescan(name, progress=progress, cancel=cancel)

    def _rescan(
        self, name: str, *, progress: ProgressFn | None, cancel: threading.Event | None
    ) -> IndexReport:
        row = self._row(name)
        if row is None:
            raise InvalidRequest(
                f"no collection named '{name}'; add files with 'edgedesk docs add'"
            )
        cid, model, _ = row
        embedder = self.embedder_for(model or self.default_model)
        report = IndexReport(name)
        roots = [
            fs_path(r[0])
            for r in self.database.query(
                "SELECT path FROM collection_roots WHERE collection_id = ?", (cid,)
            )
        ]
        unreadable: list[tuple[Path, str]] = []
        files = sorted(set(walk(roots, unreadable)))
        real_roots = [real_root(r) for r in roots]
        known = {
            r[0]: (int(r[1]), int(r[2]), float(r[3]), r[4])
            for r in self.database.query(
                "SELECT path, id, size, mtime, hash FROM documents WHERE collection_id = ?", (cid,)
            )
        }
        present = {path_text(f) for f in files}
        gone = [known[p][0] for p in known if p not in present]
        with self.database.transaction():
            for doc_id in gone:
                self.store.delete_document(cid, doc_id)
            self.database.execute("DELETE FROM skipped_files WHERE collection_id = ?", (cid,))
        report.removed = len(gone)
        for folder, reason in unreadable:
            self._skip(cid, folder, reason, report, None)
            if folder in roots and is_link(folder):  # a root that became a link: refused
                report.refused.append(report.skipped.pop())
        for done, path in enumerate(files):
            if cancel is not None and cancel.is_set():
                report.cancelled = True
                break

            def tick(done: int = done, path: Path = path) -> None:
                if progress is not None:
                    progress(
                        IndexProgress(done, len(files), path_text(path), report.chunks_embedded)
                    )

            tick()
            self._index_file(
                cid,
                path,
                real_roots,
                known=known.get(path_text(path)),
                embedder=embedder,
                report=report,
                cancel=cancel,
                tick=tick,
            )
        if progress is not None and not report.cancelled:
            progress(IndexProgress(len(files), len(files), None, report.chunks_embedded))
        return report

    def _skip(
        self,
        cid: int,
        path: Path,
        reason: str,
        report: IndexReport,
        known: tuple[int, int, float, str] | None,
    ) -> None:
        reason = path_text(reason)  # it may quote the file's name
        report.skipped.append(SkippedFile(path_text(path), reason))
        with self.database.transaction():
            if known is not None:  # an indexed file that became unreadable: drop stale text
                self.store.delete_document(cid, known[0])
                report.removed += 1
            self.database.execute(
                "INSERT OR REPLACE INTO skipped_files VALUES (?, ?, ?, ?)",
                (cid, path_text(path), reason, time.time()),
            )

    def _read(
        self,
        cid: int,
        path: Path,
        opened: Opened,
        *,
        known: tuple[int, int, float, str] | None,
        report: IndexReport,
    ) -> tuple[os.stat_result, str, list[loaders.Block]] | None:
        """An opened file's stat, digest and text; None when it is unchanged or skipped
        (noted in ``report``)."""
        stat = opened.stat
        if stat.st_nlink > 1 and not self.allow_hard_links():
            self._skip(cid, path, hard_link_reason(stat.st_nlink), report, known)
            return None
        if known is not None and known[1] == stat.st_size and known[2] == stat.st_mtime:
            report.unchanged += 1
            return None
        try:
            # Size first: a huge file is never read in full.
            loaders.check(path, stat.st_size, max_bytes=self.max_file_bytes)
            data = loaders.read_fd(opened.fd, self.max_file_bytes)
            digest = hashlib.sha256(data).hexdigest()
            if known is not None and digest == known[3]:
                with self.database.transaction():
                    self.database.execute(
                        "UPDATE documents SET mtime = ? WHERE id = ?", (stat.st_mtime, known[0])
                    )
                report.unchanged += 1
                return None
            blocks = loaders.load_data(path, data, max_bytes=self.max_file_bytes)
        except loaders.SkipFile as exc:
            self._skip(cid, path, exc.reason, report, known)
            return None
        return stat, digest, blocks

    def _index_file(
        self,
        cid: int,
        path: Path,
        real_roots: list[str],
        *,
        known: tuple[int, int, float, str] | None,
        embedder: Embedder,
        report: IndexReport,
        cancel: threading.Event | None,
        tick: Callable[[], None],
    ) -> None:
        if not within(path, real_roots):  # a link (or a link above it) leads out of the roots
            self._skip(cid, path, outside_reason(path), report, known)
            return
        try:
            loaders.check_type(path)  # a folder's images and archives are never opened
            # By handle from here on: what is checked is what is read (``_handles``).
            opened = open_inside(path, real_roots)
        except loaders.SkipFile as exc:
            self._skip(cid, path, exc.reason, report, known)
            return
        except Refused as exc:
            self._skip(cid, path, exc.reason, report, known)
            return
        except OSError as exc:
            self._skip(cid, path, f"cannot read ({exc.strerror})", report, known)
            return
        try:
            read = self._read(cid, path, opened, known=known, report=report)
        finally:
            os.close(opened.fd)
        if read is None:
            return
        stat, digest, blocks = read
        chunks = chunk_blocks(
            blocks,
            embedder.count_tokens,
            max_tokens=self.max_tokens,
            overlap_tokens=self.overlap_tokens,
        )
        if self.store.store_in_batches(
            cid,
            path,
            stat=stat,
            digest=digest,
            known=known,
            chunks=chunks,
            embedder=embedder,
            report=report,
            cancel=cancel,
            tick=tick,
        ):
            if known is None:
                report.added += 1
            else:
                report.updated += 1
