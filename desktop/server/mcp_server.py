"""EdgeDesk's documents as an MCP server for local agents (Claude Code, Codex, Continue):
``search_documents``, ``list_collections`` and ``read_document_passage``.

The same ``MCPServer`` (the official SDK) runs over stdio (``edgedesk mcp serve``) and at
``/mcp`` on the local HTTP server (Streamable HTTP with sessions, JSON answers), where the
server's Guard checks the API key and Host header like every other route. Tool handlers
block (search embeds the query); the SDK runs them on worker threads.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from desktop.chat.document_tools import LIST_SPEC, READ_SPEC, SEARCH_SPEC, DocumentTools
from desktop.tools.types import ToolResult

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from starlette.types import Receive, Scope, Send

INSTRUCTIONS = (
    "Private documents indexed by EdgeDesk on this machine. Search them with "
    "search_documents, read a whole passage with read_document_passage, and "
    "cite the file and lines each passage names."
)


def _answer(result: ToolResult) -> str:
    if result.is_error:
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(result.text.removeprefix("error: "))
    return result.text


def document_server(tools: DocumentTools) -> MCPServer:
    """An MCP server offering the document tools (not started)."""
    from mcp.server.mcpserver import MCPServer

    from desktop import __version__

    server: MCPServer = MCPServer(
        "edgedesk", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    from mcp.server.mcpserver import Context

    def search_documents(query: str, ctx: Context, collection: str = "") -> str:
        return _answer(
            _for_key(tools, ctx).search_documents({"query": query, "collection": collection})
        )

    def list_collections(ctx: Context) -> str:
        return _answer(_for_key(tools, ctx).list_collections({}))

    def read_document_passage(source: str, ctx: Context) -> str:
        return _answer(_for_key(tools, ctx).read_document_passage({"source": source}))

    for handler, spec in (
        (search_documents, SEARCH_SPEC),
        (list_collections, LIST_SPEC),
        (read_document_passage, READ_SPEC),
    ):
        # The SDK finds the Context parameter by its resolved type; this module imports
        # the SDK lazily, so the string annotation would not resolve in its globals.
        handler.__annotations__["ctx"] = Context
        server.tool(description=spec.description)(handler)
    return server


def _for_key(tools: DocumentTools, ctx: Context[Any, Any]) -> DocumentTools:
    """``tools`` as the request's API key may use them: one collection under
    ``--read-only-docs`` (over HTTP; stdio has no key and reads everything)."""
    try:
        request = ctx.request_context.request
    except ValueError:  # not within a request
        return tools
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    info = state.get("edgedesk")
    collection = getattr(info, "key_collection", None)
    if not collection:
        return tools
    return tools.scoped(collection, str(getattr(info, "key_name", None) or "?"))


class McpEndpoint:
    """The ASGI endpoint ``/mcp``: the SDK's Streamable HTTP handler, its session manager
    started on the first request (the local server runs without a lifespan) and kept for
    the server's life. Runs on the server's event loop."""

    def __init__(self, tools: DocumentTools) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        self.server = document_server(tools)
        # The Guard in front of every route already checks the Host header and the key.
        # Sessions (not stateless): a stateless request builds a server per call, which
        # tripled search_documents' latency (tests/benchmarks/bench_tools.py).
        app = self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=False,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._handler: Any = app.routes[0].endpoint  # type: ignore[attr-defined]
        self._ready: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one MCP request (starting the session manager first, once)."""
        if self._ready is None:
            self._ready = asyncio.Event()
            self._holder = asyncio.get_running_loop().create_task(self._hold(self._ready))
        await self._ready.wait()
        await self._handler(scope, receive, send)

    async def _hold(self, ready: asyncio.Event) -> None:
        async with self.server.session_manager.run():
            ready.set()
            await asyncio.Event().wait()  # until the server's loop ends
