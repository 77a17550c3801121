"""The built-in tools over the user's indexed documents: search, read a passage, list.

They only read what the user already gave EdgeDesk, so a chat runs them without asking.
The same tools are what ``edgedesk mcp serve`` and ``/mcp`` offer to local agents.
Handlers block (search embeds the query) and run on the caller's thread.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.base.errors import EdgeDeskError
from desktop.tools import BuiltinTool, ToolResult, ToolSpec

if TYPE_CHECKING:
    from desktop.retrieval import CollectionInfo, Hit

SEARCH_K = 5
SNIPPET_CHARS = 800  # a search hit's text; read_document_passage gives the whole chunk
_SOURCE = re.compile(r"^\s*(?:chunk:)?(\d{1,40})\s*$")
MAX_CHUNK_ID = 2**63 - 1  # SQLite's largest integer; no passage id is larger

SEARCH_SPEC = ToolSpec(
    "search_documents",
    "Search the user's indexed documents (hybrid keyword and meaning search). Returns the "
    "best passages, each with its source id, file, page and lines; cite them as [n].",
    {
        "type": "object",
        "properties": {
            "collection": {
                "type": "string",
                "description": "The document collection to search ('' for all).",
            },
            "query": {"type": "string", "description": "What to look for."},
        },
        "required": ["query"],
    },
    needs_approval=False,
)
READ_SPEC = ToolSpec(
    "read_document_passage",
    "Read the whole passage behind a source id that search_documents returned (e.g. 'chunk:42').",
    {
        "type": "object",
        "properties": {
            "source": {"type": "string", "description": "A source id such as 'chunk:42'."}
        },
        "required": ["source"],
    },
    needs_approval=False,
)
LIST_SPEC = ToolSpec(
    "list_collections",
    "List the user's document collections with how many documents and passages each has.",
    {"type": "object", "properties": {}},
    needs_approval=False,
)


@dataclass(frozen=True)
class DocumentAccess:
    """What the document tools read: search, chunks by id, the collection list."""

    # query, collections, k, cancel (set when the caller left: the search stops, Cancelled)
    search: Callable[[str, Sequence[str], int, threading.Event | None], list[Hit]]
    fetch: Callable[[Sequence[int]], list[Hit]]
    collections: Callable[[], list[CollectionInfo]]


def hits_text(hits: Sequence[Hit]) -> str:
    """Numbered passages with their source ids and locations, as the model reads them."""
    if not hits:
        return "No passage matched."
    parts = []
    for n, hit in enumerate(hits, start=1):
        text = hit.text if len(hit.text) <= SNIPPET_CHARS else hit.text[:SNIPPET_CHARS] + " …"
        parts.append(f"[{n}] source chunk:{hit.chunk_id} · {hit.location}\n{text}")
    return "\n\n".join(parts)


class DocumentTools:
    """search_documents, read_document_passage and list_collections over ``access``.

    Any thread; each call blocks (search embeds the query).
    """

    def __init__(self, access: DocumentAccess, *, k: int = SEARCH_K) -> None:
        self.access = access
        self.k = k

    def scoped(self, collection: str, key_name: str) -> DocumentTools:
        """The same tools limited to one ``collection`` (an API key's read-only scope).

        Another collection is refused naming the scope; the list shows only this one;
        a passage of another collection is not there.
        """
        return _ScopedTools(self.access, collection, key_name, k=self.k)

    # Any: a tool call's arguments, any JSON the model wrote; each read with .get() and checked
    def search_documents(
        self, args: dict[str, Any], cancel: threading.Event | None = None
    ) -> ToolResult:
        """The best passages for ``query`` in ``collection`` (all when empty); ``cancel``
        set (the caller left) stops the query's embedding with an error result."""
        query = str(args.get("query", "")).strip()
        collection = str(args.get("collection", "") or "").strip()
        if not query:
            return ToolResult("error: give a query to search for", True)
        return self._search(query, collection, cancel)

    def _search(
        self, query: str, collection: str, cancel: threading.Event | None = None
    ) -> ToolResult:
        names = [c.name for c in self.access.collections()]
        if collection and collection not in names:
            there = ", ".join(names) or "none yet"
            return ToolResult(
                f"error: no collection named '{collection}' (collections: {there})", True
            )
        try:
            hits = self.access.search(query, [collection] if collection else names, self.k, cancel)
        except EdgeDeskError as exc:
            return ToolResult(f"error: {exc.message}", True)
        return ToolResult(hits_text(hits))

    # Any: a tool call's arguments as the model wrote them (see search_documents)
    def read_document_passage(self, args: dict[str, Any]) -> ToolResult:
        """The whole passage behind a source id (``chunk:N``)."""
        source = str(args.get("source", ""))
        match = _SOURCE.match(source)
        if match is None:
            return ToolResult(
                f"error: '{source}' is not a source id; use one that "
                "search_documents returned, such as 'chunk:42'",
                True,
            )
        chunk_id = int(match.group(1))
        found = self.access.fetch([chunk_id]) if chunk_id <= MAX_CHUNK_ID else []
        if not found:
            # A number past SQLite's integer range names no passage (it once reached the
            # database and failed with an OverflowError and an empty tool error).
            return ToolResult(
                f"error: there is no passage {source.strip()} (the document may have been "
                "re-indexed or its file moved out of the indexed folder; search again)",
                True,
            )
        hit = found[0]
        return ToolResult(f"source chunk:{hit.chunk_id} · {hit.location}\n{hit.text}")

    # Any: a tool call's arguments as the model wrote them (see search_documents)
    def list_collections(self, _args: dict[str, Any]) -> ToolResult:
        """Each collection with its document and passage counts."""
        infos = self.access.collections()
        if not infos:
            return ToolResult("There are no document collections yet.")
        return ToolResult(
            "\n".join(f"{c.name}: {c.documents} documents, {c.chunks} passages" for c in infos)
        )

    def builtins(self, *, listing: bool = False) -> list[BuiltinTool]:
        """The tools a chat offers (``listing``: with list_collections, as /mcp has)."""
        tools = [
            BuiltinTool(SEARCH_SPEC, self.search_documents),
            BuiltinTool(READ_SPEC, self.read_document_passage),
        ]
        if listing:
            tools.append(BuiltinTool(LIST_SPEC, self.list_collections))
        return tools


class _ScopedTools(DocumentTools):
    """DocumentTools an API key scoped to one collection (``--read-only-docs``) calls."""

    def __init__(self, access: DocumentAccess, collection: str, key_name: str, *, k: int) -> None:
        only = collection

        def collections() -> list[CollectionInfo]:
            return [c for c in access.collections() if c.name == only]

        def fetch(ids: Sequence[int]) -> list[Hit]:
            return [h for h in access.fetch(ids) if h.collection == only]

        super().__init__(DocumentAccess(access.search, fetch, collections), k=k)
        self.collection = collection
        self.key_name = key_name

    def _search(
        self, query: str, collection: str, cancel: threading.Event | None = None
    ) -> ToolResult:
        if collection and collection != self.collection:
            return ToolResult(
                f"error: the API key '{self.key_name}' may read only the collection "
                f"'{self.collection}' (its scope: --read-only-docs {self.collection}); "
                f"not '{collection}'",
                True,
            )
        return super()._search(query, self.collection, cancel)
