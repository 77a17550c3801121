"""EdgeDesk's documents as an MCP server for local agents (Claude Code, Codex, Continue):
``search_documents``, ``list_collections`` and ``read_document_passage``.

The same ``MCPServer`` (the official SDK) runs over stdio (``edgedesk mcp serve``) and at
``/mcp`` on the local HTTP server (Streamable HTTP with sessions, JSON answers), where the
server's Guard checks the API key and Host header like every other route. Tool handlers
block (search embeds the query) and run on worker threads.

A search stops when nobody waits for it any more. ``search_documents`` runs the search
on a worker thread with a cancel event the engine checks between decodes, and sets it
when the SDK cancels the call: on MCP's ``notifications/cancelled`` for it, and when
its session ends (over stdio: the client closed stdin). Over HTTP the SDK runs a tool
on the session's task, not the POST's, and nothing is cancelled when the POST's
connection drops; so ``McpEndpoint`` gives each POST a cancel event (in its scope's
state, which the tool reads through ``ctx``) and, once the SDK has read the body,
watches the connection for ``http.disconnect`` and sets it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from desktop.chat import LIST_SPEC, READ_SPEC, SEARCH_SPEC, DocumentTools
from desktop.tools import ToolResult

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from starlette.types import Message, Receive, Scope, Send

T = TypeVar("T")

CANCEL_STATE = "edgedesk_cancel"  # the scope state key of a POST's cancel event

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

    async def search_documents(query: str, ctx: Context, collection: str = "") -> str:
        scoped, cancel = _for_key(tools, ctx), _cancel_of(ctx) or threading.Event()
        args = {"query": query, "collection": collection}
        return _answer(await _stoppable(lambda: scoped.search_documents(args, cancel), cancel))

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


def _cancel_of(ctx: Context[Any, Any]) -> threading.Event | None:
    """The cancel event McpEndpoint gave this call's POST (None over stdio)."""
    try:
        request = ctx.request_context.request
    except ValueError:  # not within a request
        return None
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    cancel = state.get(CANCEL_STATE)
    return cancel if isinstance(cancel, threading.Event) else None


async def _stoppable(work: Callable[[], T], cancel: threading.Event) -> T:
    """``work()`` on a worker thread, waited for to its end; the tool call being cancelled
    meanwhile sets ``cancel``, so the search stops before the engine's next decode.

    The SDK cancels a call's scope on MCP's ``notifications/cancelled`` for it and when
    its session ends (stdin closed, the HTTP session deleted); a thread cannot be
    interrupted, so without the event it would search on for nobody.
    """
    finished = False

    async def watch() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            if not finished:
                cancel.set()

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            result = await anyio.to_thread.run_sync(work)
        finally:
            finished = True
            group.cancel_scope.cancel()
    return result


class _DisconnectWatch:
    """A POST's ``receive`` for the SDK that, once the body is read, keeps one task
    reading the connection and sets ``cancel`` on ``http.disconnect``. Later reads by
    the SDK get that same disconnect (one reader of the connection at a time)."""

    def __init__(self, receive: Receive, cancel: threading.Event) -> None:
        self._receive = receive
        self._cancel = cancel
        self._watcher: asyncio.Task[Message] | None = None

    async def receive(self) -> Message:
        """The next message: the body's parts, then (from the watcher) the disconnect."""
        if self._watcher is not None:
            return await asyncio.shield(self._watcher)
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self._cancel.set()
        elif not message.get("more_body", False):
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        return message

    async def _watch(self) -> Message:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self._cancel.set()
                return message

    def stop(self) -> None:
        """Stop watching (the response is sent; a later disconnect cancels nothing)."""
        if self._watcher is not None:
            self._watcher.cancel()


class McpEndpoint:
    """The ASGI endpoint ``/mcp``: the SDK's Streamable HTTP handler, built and its
    session manager started on the first request (the local server runs without a
    lifespan) and kept for the server's life. Runs on the server's event loop.

    The SDK is imported then, not when the server starts: it is about 24 MiB of the
    app's memory (issue 47), and most servers never see an MCP client.
    """

    def __init__(self, tools: DocumentTools) -> None:
        self._tools = tools
        self.server: MCPServer | None = None
        self._handler: Any = None
        self._ready: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None

    def _build(self) -> MCPServer:
        from mcp.server.transport_security import TransportSecuritySettings

        server = document_server(self._tools)
        # The Guard in front of every route already checks the Host header and the key.
        # Sessions (not stateless): a stateless request builds a server per call, which
        # tripled search_documents' latency (tests/benchmarks/bench_tools.py).
        app = server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=False,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._handler = app.routes[0].endpoint  # type: ignore[attr-defined]
        return server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one MCP request (building the server and starting its session manager
        first, once)."""
        if self._ready is None:
            self._ready = asyncio.Event()
            self._holder = asyncio.get_running_loop().create_task(self._hold(self._ready))
        await self._ready.wait()
        if self._handler is None:
            raise RuntimeError("the MCP server could not be started; see the log")
        if scope.get("method") != "POST":  # a GET stream or DELETE runs no tool
            await self._handler(scope, receive, send)
            return
        cancel = threading.Event()
        scope.setdefault("state", {})[CANCEL_STATE] = cancel
        watch = _DisconnectWatch(receive, cancel)
        try:
            await self._handler(scope, watch.receive, send)
        finally:
            watch.stop()

    async def _hold(self, ready: asyncio.Event) -> None:
        # Imports and builds on a thread: the loop keeps serving the other routes.
        try:
            self.server = await asyncio.to_thread(self._build)
        except BaseException:
            ready.set()  # waiting requests fail (no handler) instead of hanging
            raise
        async with self.server.session_manager.run():
            ready.set()
            await asyncio.Event().wait()  # until the server's loop ends
