"""EdgeDesk's documents as an MCP server: the SDK's own client lists and calls the tools
over stdio (``edgedesk mcp serve``) and at ``/mcp`` (behind the API key)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from desktop.base.config import NoPolicy, ServerSettings
from desktop.engine._types import EngineStats
from desktop.root.context import AppContext, build_context
from desktop.server._runner import ServerRunner
from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import ServerConfig
from desktop.tools._types import ToolError
from tests.conftest import wait_until

TOOLS = {"search_documents", "list_collections", "read_document_passage"}


@dataclass
class Served:
    """A running local server with /mcp, its key, and the indexed handbook."""

    ctx: AppContext
    runner: ServerRunner
    key: str
    handbook: Path

    @property
    def url(self) -> str:
        return self.runner.url.rstrip("/").removesuffix("/v1") + "/mcp"


@pytest.fixture
def indexed(tiny_embed: Path, tmp_path: Path, context: AppContext) -> tuple[AppContext, Path]:
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text(
        "# Leave\n\nStaff get 25 days of paid leave a year.\n", encoding="utf-8"
    )
    context.library.add("handbook", [docs], str(tiny_embed))
    return context, docs / "leave.md"


@pytest.fixture
def served(indexed: tuple[AppContext, Path]) -> Iterator[Served]:
    ctx, handbook = indexed
    runner = ctx.new_api_server(
        settings=ServerSettings(require_key=True).model_copy(update={"port": 0})
    )
    key = ctx.key_store.create("agent")
    runner.start()
    try:
        yield Served(ctx, runner, key, handbook)
    finally:
        runner.stop()


async def _use(session: ClientSession, handbook: Path) -> None:
    await session.initialize()
    listed = await session.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    collections = await session.call_tool("list_collections", {})
    assert collections.content[0].text == "handbook: 1 documents, 1 passages"  # type: ignore[union-attr]
    found = await session.call_tool(
        "search_documents", {"query": "paid leave", "collection": "handbook"}
    )
    text = found.content[0].text  # type: ignore[union-attr]
    assert not found.is_error and "25 days of paid leave" in text
    assert f"{handbook} lines 1-3" in text
    source = text.split("source ")[1].split(" ")[0]
    passage = await session.call_tool("read_document_passage", {"source": source})
    assert "25 days of paid leave" in passage.content[0].text  # type: ignore[union-attr]
    missing = await session.call_tool("search_documents", {"query": "x", "collection": "nope"})
    assert missing.is_error and "no collection named 'nope'" in str(missing.content)


def _mcp_serve() -> StdioServerParameters:
    """`edgedesk mcp serve` from this checkout, on the test's data folder."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "desktop", "mcp", "serve"],
        env={"EDGEDESK_HOME": os.environ["EDGEDESK_HOME"]},
        cwd=str(Path(__file__).parents[3]),
    )


def test_edgedesk_mcp_serve_over_stdio(indexed: tuple[AppContext, Path]) -> None:
    _ctx, handbook = indexed

    async def main() -> None:
        async with stdio_client(_mcp_serve()) as (read, write), ClientSession(read, write) as s:
            await _use(s, handbook)

    anyio.run(main)


@asynccontextmanager
async def _http(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session


def test_the_same_tools_at_slash_mcp_behind_the_key(served: Served) -> None:
    async def main() -> None:
        async with _http(served.url, served.key) as session:
            await _use(session, served.handbook)

    anyio.run(main)
    records = [r for r in served.ctx.paths.log_dir.glob("access*")]
    assert records and "/mcp" in records[0].read_text(encoding="utf-8")


def test_slash_mcp_refuses_a_missing_key(served: Served) -> None:
    response = httpx2.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401 and "API key" in response.text


def test_an_http_mcp_server_is_called_through_the_network_log(served: Served) -> None:
    # EdgeDesk's own /mcp as a user's Streamable HTTP server: the calls are logged.
    clients = McpClients(gate=served.ctx.net, token=lambda _n: served.key)
    try:
        config = ServerConfig("docs", url=served.url)
        assert {t.name for t in clients.tools(config)} == TOOLS
        assert "handbook" in clients.call(config, "list_collections", {}).text
    finally:
        clients.close()
    logged = [c for c in served.ctx.net.entries() if c.path == "/mcp"]
    assert logged and all(c.purpose == "call the MCP tool server docs" for c in logged)
    assert all(c.allowed for c in logged)
    served.ctx.net.offline = True
    offline = McpClients(gate=served.ctx.net, token=lambda _n: served.key)
    try:
        with pytest.raises(ToolError, match="offline"):
            offline.tools(ServerConfig("docs2", url=served.url))
    finally:
        offline.close()


def test_the_api_answers_mcp_servers_with_a_400_naming_the_server(served: Served) -> None:
    base = served.url.removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {served.key}"}
    anthropic = httpx2.post(
        f"{base}/v1/messages",
        headers=headers,
        json={
            "model": "m",
            "max_tokens": 8,
            "messages": [{"role": "user", "content": "hi"}],
            "mcp_servers": [{"type": "url", "url": "https://ghost/mcp", "name": "ghost"}],
        },
    )
    assert anthropic.status_code == 400
    assert "'ghost' is not configured" in anthropic.json()["error"]["message"]
    responses = httpx2.post(
        f"{base}/v1/responses",
        headers=headers,
        json={
            "model": "m",
            "input": "hi",
            "tools": [{"type": "mcp", "server_label": "ghost", "server_url": "https://g/mcp"}],
        },
    )
    assert responses.status_code == 400
    assert responses.json()["error"]["param"] == "tools"


def test_a_key_scoped_to_one_collection_reads_no_other_over_slash_mcp(
    served: Served, tiny_embed: Path, tmp_path: Path
) -> None:
    ctx = served.ctx
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "budget.md").write_text(
        "# Budget\n\nThe zanzibar merger budget is 9 million.\n", encoding="utf-8"
    )
    ctx.library.add("secrets", [secrets], str(tiny_embed))
    (secret_hit,) = [h for h in ctx.searcher.search("zanzibar merger budget", ["secrets"], k=1)]
    scoped = ctx.key_store.create("handbook-reader", read_only_docs="handbook")
    chat_only = ctx.key_store.create("chat-only", endpoints=["chat"])

    async def main() -> None:
        async with _http(served.url, scoped) as session:
            await session.initialize()
            listed = await session.call_tool("list_collections", {})
            assert listed.content[0].text == "handbook: 1 documents, 1 passages"  # type: ignore[union-attr]
            refused = await session.call_tool(
                "search_documents", {"query": "budget", "collection": "secrets"}
            )
            assert refused.is_error
            assert "may read only the collection 'handbook'" in str(refused.content)
            everywhere = await session.call_tool(
                "search_documents", {"query": "zanzibar merger budget"}
            )
            assert "zanzibar" not in str(everywhere.content)  # "all" means its one collection
            own = await session.call_tool("search_documents", {"query": "paid leave"})
            assert "25 days of paid leave" in str(own.content)
            passage = await session.call_tool(
                "read_document_passage", {"source": f"chunk:{secret_hit.chunk_id}"}
            )
            assert passage.is_error and "zanzibar" not in str(passage.content)
        async with _http(served.url, served.key) as session:  # an unscoped key reads both
            await session.initialize()
            both = await session.call_tool("list_collections", {})
            assert "secrets" in both.content[0].text  # type: ignore[union-attr]

    anyio.run(main)
    refused = httpx2.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {chat_only}",
        },
    )
    assert refused.status_code == 403 and "chat-only" in refused.text


def test_a_read_only_docs_key_cannot_read_a_planted_link_out_of_the_folder(
    served: Served, tmp_path: Path
) -> None:
    ctx = served.ctx
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:zanzibar vault:/root:/bin/sh\n")
    (served.handbook.parent / "passwd.txt").symlink_to(outside / "passwd")
    report = ctx.library.rescan("handbook")
    [skipped] = report.skipped
    assert skipped.path.endswith("passwd.txt") and "links outside" in skipped.reason
    scoped = ctx.key_store.create("reader", read_only_docs="handbook")

    async def main() -> None:
        async with _http(served.url, scoped) as session:
            await session.initialize()
            found = await session.call_tool("search_documents", {"query": "root zanzibar vault"})
            assert "zanzibar" not in str(found.content) and "root:x" not in str(found.content)
            huge = await session.call_tool(
                "read_document_passage", {"source": "chunk:99999999999999999999999"}
            )
            assert huge.is_error
            assert "there is no passage chunk:99999999999999999999999" in str(huge.content)

    anyio.run(main)


def test_a_1_mb_query_over_slash_mcp_is_refused_at_once(served: Served) -> None:
    async def main() -> None:
        async with _http(served.url, served.key) as session:
            await session.initialize()
            started = time.perf_counter()
            huge = await session.call_tool("search_documents", {"query": "leave " * 180_000})
            assert time.perf_counter() - started < 5.0  # was 197 s
            assert huge.is_error and "at most 16384" in str(huge.content)
            own = await session.call_tool("search_documents", {"query": "paid leave"})
            assert "25 days of paid leave" in str(own.content)  # nothing held up behind it

    anyio.run(main)


def _initialize(url: str, key: str) -> dict[str, str]:
    """An initialized /mcp session's headers (session id, protocol version, key)."""
    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "leaver", "version": "1"},
        },
    }
    opened = httpx2.post(url, json=hello, headers=headers, timeout=60)
    assert opened.status_code == 200, opened.text
    headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    headers["Mcp-Protocol-Version"] = opened.json()["result"]["protocolVersion"]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(url, json=ready, headers=headers, timeout=60).status_code == 202
    return headers


def test_a_search_over_slash_mcp_stops_when_its_client_leaves(
    tmp_path: Path, served_minilm: Served
) -> None:
    """A 16384-character query (the cap) is ~32 MiniLM windows, ~20 s of CPU on a busy
    machine; it once ran to the end with nobody waiting. The engine now stops it
    before its next decode and counts it."""
    served = served_minilm

    def stats() -> EngineStats:
        [model] = served.ctx.scheduler.loaded(counters=True)
        assert model.stats is not None
        return model.stats

    headers = _initialize(served.url, served.key)
    query = (".,;:!?-" * 3000)[:16384]  # about a token a character
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search_documents", "arguments": {"query": query}},
    }
    payload = json.dumps(call).encode()
    host, port = served.url.removeprefix("http://").split("/")[0].split(":")
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    before = stats()
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n{head}"
            f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        wait_until(
            lambda: stats().embed_decodes > before.embed_decodes,
            timeout=60,
            what="the query's embedding started",
        )
    # The client has left (its socket is closed) with the search's windows to go.
    wait_until(
        lambda: stats().embeds_cancelled > before.embeds_cancelled,
        timeout=60,
        what="the search cancelled",
    )
    decoded = stats().embed_decodes - before.embed_decodes
    assert decoded < 16, f"{decoded} of the query's ~32 windows were embedded for nobody"

    async def main() -> None:  # the next search is served, nothing left running ahead of it
        async with _http(served.url, served.key) as session:
            await session.initialize()
            own = await session.call_tool("search_documents", {"query": "paid leave"})
            assert not own.is_error and "25 days of paid leave" in str(own.content)

    anyio.run(main)
    assert stats().embeds_cancelled == before.embeds_cancelled + 1


# A query at the cap, about a token a character: ~32 MiniLM windows, 20 s of CPU on a
# busy 2-core machine. Three at once take a minute there, seconds on a fast machine.
LONG_QUERIES = [(marks * 3000)[:16384] for marks in (".,;:!?-", ",;:!?-.", ";:!?-.,")]


def test_a_search_over_slash_mcp_stops_on_mcps_cancel_notification(
    served_minilm: Served,
) -> None:
    """The client gives up on the call (the SDK sends ``notifications/cancelled``) while
    keeping its session and the call's POST open: the search stops and is counted."""
    served = served_minilm

    def stats() -> EngineStats:
        [model] = served.ctx.scheduler.loaded(counters=True)
        assert model.stats is not None
        return model.stats

    async def main() -> None:
        async with _http(served.url, served.key) as session:
            await session.initialize()
            await session.call_tool("search_documents", {"query": "paid leave"})  # loads MiniLM
            before = stats()
            async with anyio.create_task_group() as group:
                args = {"query": LONG_QUERIES[0]}
                group.start_soon(session.call_tool, "search_documents", args)
                await anyio.to_thread.run_sync(
                    lambda: wait_until(
                        lambda: stats().embed_decodes > before.embed_decodes,
                        timeout=60,
                        what="the query's embedding started",
                    )
                )
                group.cancel_scope.cancel()  # the agent's user pressed Esc
            await anyio.to_thread.run_sync(
                lambda: wait_until(
                    lambda: stats().embeds_cancelled > before.embeds_cancelled,
                    timeout=60,
                    what="the search cancelled",
                )
            )
            decoded = stats().embed_decodes - before.embed_decodes
            assert decoded < 16, f"{decoded} of the query's ~32 windows were embedded for nobody"
            own = await session.call_tool("search_documents", {"query": "paid leave"})
            assert not own.is_error and "25 days of paid leave" in str(own.content)

    anyio.run(main)


def _cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its children: the model runs in a worker process."""
    process = psutil.Process(pid)
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def test_searches_over_stdio_stop_on_mcps_cancel_notification(
    indexed_minilm: AppContext,
) -> None:
    """``edgedesk mcp serve`` once searched on after its client cancelled the calls
    (a minute of CPU on a busy machine for three long queries), and the next search
    waited behind them."""

    async def main() -> None:
        async with (
            stdio_client(_mcp_serve()) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            warm = await session.call_tool("search_documents", {"query": "paid leave"})
            assert "25 days of paid leave" in str(warm.content)
            [child] = [p for p in psutil.Process().children() if "mcp" in p.cmdline()[-2:]]
            idle = _cpu_s(child.pid)
            async with anyio.create_task_group() as group:
                for query in LONG_QUERIES:
                    group.start_soon(session.call_tool, "search_documents", {"query": query})
                await anyio.to_thread.run_sync(
                    lambda: wait_until(
                        lambda: _cpu_s(child.pid) > idle + 0.5,
                        timeout=60,
                        what="the searches computing",
                    )
                )
                group.cancel_scope.cancel()  # one notifications/cancelled a call
            cancelled = time.perf_counter()
            own = await session.call_tool("search_documents", {"query": "paid leave"})
            waited = time.perf_counter() - cancelled
            assert not own.is_error and "25 days of paid leave" in str(own.content)
            assert waited < 5.0, f"the next search waited {waited:.1f} s behind cancelled ones"

    anyio.run(main)


def _send(server: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert server.stdin is not None
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()


def _answer_to(server: subprocess.Popen[bytes], request_id: int) -> dict[str, object]:
    assert server.stdout is not None
    while True:
        line = server.stdout.readline()
        assert line, "the server closed its stdout"
        message: dict[str, object] = json.loads(line)
        if message.get("id") == request_id:
            return message


def test_edgedesk_mcp_serve_stops_its_searches_when_stdin_closes(
    indexed_minilm: AppContext, tmp_path: Path
) -> None:
    """An agent that quits closes the server's stdin; its searches in flight once kept
    ``edgedesk mcp serve`` computing (and alive) until they ended."""
    params = _mcp_serve()
    with (tmp_path / "stderr.txt").open("wb") as errors:
        server = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=params.env,
            cwd=params.cwd,
        )
    try:
        _send(
            server,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "agent", "version": "1"},
                },
            },
        )
        assert "result" in _answer_to(server, 1)
        _send(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        search = {"name": "search_documents", "arguments": {"query": "paid leave"}}
        _send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search})
        assert "25 days of paid leave" in json.dumps(_answer_to(server, 2))
        idle = _cpu_s(server.pid)
        for n, query in enumerate(LONG_QUERIES, start=3):
            search = {"name": "search_documents", "arguments": {"query": query}}
            _send(server, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": search})
        wait_until(lambda: _cpu_s(server.pid) > idle + 0.5, timeout=60, what="the searches")
        assert server.stdin is not None
        server.stdin.close()  # the agent quit
        closed = time.perf_counter()
        assert server.wait(timeout=60) == 0
        took = time.perf_counter() - closed
        assert took < 5.0, f"it searched on {took:.1f} s for nobody"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        assert server.stdout is not None
        server.stdout.close()


@pytest.fixture
def indexed_minilm(tmp_path: Path) -> Iterator[AppContext]:
    """A handbook indexed with the real MiniLM (its query windows take real time)."""
    from tests.benchmarks.bench_retrieval_quality import minilm_path

    minilm = minilm_path()
    assert minilm.exists(), f"the MiniLM test model is missing: {minilm}"
    ctx = build_context(policy=NoPolicy())
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text(
        "# Leave\n\nStaff get 25 days of paid leave a year.\n", encoding="utf-8"
    )
    ctx.library.add("handbook", [docs], str(minilm))
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def served_minilm(indexed_minilm: AppContext, tmp_path: Path) -> Iterator[Served]:
    """A local server with /mcp over a handbook indexed with the real MiniLM."""
    ctx = indexed_minilm
    runner = ctx.new_api_server(
        settings=ServerSettings(require_key=True).model_copy(update={"port": 0})
    )
    key = ctx.key_store.create("agent")
    runner.start()
    try:
        yield Served(ctx, runner, key, tmp_path / "handbook" / "leave.md")
    finally:
        runner.stop()


def test_slash_mcp_hands_out_no_passage_whose_folder_became_a_link(
    served: Served, tmp_path: Path
) -> None:
    # Read time: a passage is served from the index only while its file still opens,
    # by handle and following no link, inside the collection's folder. A folder swapped
    # for a link to a private one (holding a file of the same name) hides the passage.
    private = tmp_path / "private"
    private.mkdir()
    (private / "leave.md").write_text("The zanzibar vault code is 4417.\n", encoding="utf-8")
    folder = served.handbook.parent
    source: list[str] = []

    async def before() -> None:
        async with _http(served.url, served.key) as session:
            await session.initialize()
            found = await session.call_tool("search_documents", {"query": "paid leave"})
            text = found.content[0].text  # type: ignore[union-attr]
            assert "25 days of paid leave" in text
            source.append(text.split("source ")[1].split(" ")[0])

    async def after() -> None:
        async with _http(served.url, served.key) as session:
            await session.initialize()
            found = await session.call_tool("search_documents", {"query": "paid leave"})
            assert "25 days" not in str(found.content) and "zanzibar" not in str(found.content)
            passage = await session.call_tool("read_document_passage", {"source": source[0]})
            assert passage.is_error or "25 days" not in str(passage.content)
            assert "zanzibar" not in str(passage.content)

    anyio.run(before)
    folder.rename(folder.with_name("handbook-before"))
    folder.symlink_to(private, target_is_directory=True)
    anyio.run(after)


def test_the_mcp_sdk_is_imported_by_the_first_mcp_request_not_by_the_server() -> None:
    # The SDK is ~24 MiB of the app's memory (issue 47): a server that no MCP client
    # talks to never loads it. (The tests above prove /mcp works once asked.)
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from desktop.server._mcp.documents_server import McpEndpoint\n"
        "endpoint = McpEndpoint(None)\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
