"""What an indexing run reports: progress, the files skipped, and what changed.

Plain frozen data (the report is filled in by the run that owns it); safe on any thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


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
    # Roots that became links since they were added: nothing there was read (they are
    # listed with the collection's skipped files too, for the window).
    refused: list[SkippedFile] = field(default_factory=list)


FILES_LISTED = 500  # a collection of 100k files lists its first ones (``documents`` counts)


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
    files: tuple[str, ...] = ()  # the indexed files, first FILES_LISTED by path


ProgressFn = Callable[[IndexProgress], None]
