"""Chat with your documents: load, cut into passages, embed, index, search and cite (RAG).

The face: ``__all__`` is retrieval's contract, and code outside ``desktop.retrieval``
imports only these names (an import-linter contract in pyproject.toml). The insides,
whose names start with ``_``, are free to change: ``_loaders`` (reading files),
``_chunking`` (``Passage``), ``_indexer`` (``Library``), ``_search`` (``Searcher``),
``_citations``. A name is imported from its inside module on first use, so importing the
face loads nothing heavy (numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.retrieval._chunking import DEFAULT_MAX_TOKENS, chunk_blocks
    from desktop.retrieval._citations import Citation, build_messages, citations
    from desktop.retrieval._embedder import SchedulerEmbedder
    from desktop.retrieval._indexer import Library
    from desktop.retrieval._loaders import (
        SUPPORTED_SUFFIXES,
        Block,
        SkipFile,
        load,
        numbered_lines,
        paragraphs,
    )
    from desktop.retrieval._reports import CollectionInfo, IndexProgress, IndexReport
    from desktop.retrieval._search import MAX_QUERY_CHARS, Hit, Searcher, coverage
    from desktop.retrieval._stopwords import search_terms

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MAX_QUERY_CHARS",
    "SUPPORTED_SUFFIXES",
    "Block",
    "Citation",
    "CollectionInfo",
    "Hit",
    "IndexProgress",
    "IndexReport",
    "Library",
    "SchedulerEmbedder",
    "Searcher",
    "SkipFile",
    "build_messages",
    "chunk_blocks",
    "citations",
    "coverage",
    "load",
    "numbered_lines",
    "paragraphs",
    "search_terms",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "DEFAULT_MAX_TOKENS": "_chunking",
    "chunk_blocks": "_chunking",
    "Citation": "_citations",
    "build_messages": "_citations",
    "citations": "_citations",
    "SchedulerEmbedder": "_embedder",
    "Library": "_indexer",
    "Block": "_loaders",
    "SUPPORTED_SUFFIXES": "_loaders",
    "SkipFile": "_loaders",
    "load": "_loaders",
    "numbered_lines": "_loaders",
    "paragraphs": "_loaders",
    "CollectionInfo": "_reports",
    "IndexProgress": "_reports",
    "IndexReport": "_reports",
    "Hit": "_search",
    "MAX_QUERY_CHARS": "_search",
    "Searcher": "_search",
    "coverage": "_search",
    "search_terms": "_stopwords",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
