"""Tool-call overhead through a stdio MCP server, and search_documents at 100k chunks
through EdgeDesk's /mcp.

Run: .venv/bin/python -m tests.benchmarks.bench_tools [--calls 200] [--size 100000]
     [--queries 50] [--db-dir DIR]
1. Overhead: from the model's call text to the result as the next prompt's tool message
   (parse with the per-family parser, ToolBox.call through the SDK to the test calculator
   server over stdio, audit line, Message built), per call, the server already running.
2. search_documents: the SDK's client session calls /mcp on a real local server (Guard,
   Streamable HTTP with a session, JSON) over a synthetic 100k-chunk collection built as
   bench_retrieval builds it (384 dims; the query vector is random, so the figure is the
   search and transport work, not a model). ``--db-dir`` keeps the database for reuse.
Targets (issue #26): overhead p50 <= 30 ms; search p95 <= 50 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np

from desktop.base.config import ServerSettings
from desktop.chat import DocumentAccess, DocumentTools
from desktop.engine._prompting.toolcalls import parse_tool_calls
from desktop.engine._types import Message
from desktop.retrieval._reports import CollectionInfo
from desktop.retrieval._search import Searcher
from desktop.server._asgi import services_for
from desktop.server._mcp.documents_server import McpEndpoint
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner
from desktop.tools._call_log import ToolAudit
from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import ServerList
from desktop.tools._toolbox import ToolBox
from tests.benchmarks.bench_retrieval import VOCAB, _database, _p, _unit

SERVERS = Path(__file__).parents[1] / "tools" / "mcp_servers.py"


def tool_overhead(calls: int, folder: Path) -> list[float]:
    """Milliseconds per call: parsed call text -> result as the next prompt's message."""
    path = folder / "mcp.json"
    path.write_text(
        json.dumps(
            {"mcpServers": {"calc": {"command": sys.executable, "args": [str(SERVERS), "calc"]}}}
        )
    )
    clients = McpClients(log_dir=folder, token=lambda _n: None)
    toolbox = ToolBox(ServerList(path), clients, ToolAudit(folder / "tools.jsonl"))
    try:
        specs = toolbox.available().specs
        schemas = {n: s.parameters for n, s in specs.items()}
        times = []
        for i in range(calls + 5):
            text = f'<tool_call>{{"name": "add", "arguments": {{"a": {i}, "b": 1}}}}</tool_call>'
            started = time.perf_counter()
            [call] = parse_tool_calls(text, schemas).tool_calls
            result = toolbox.call(specs[call.name], call.arguments)
            message = Message("tool", result.text, tool_call_id=call.id)
            elapsed = (time.perf_counter() - started) * 1000
            assert message.content == str(i + 1), message
            if i >= 5:  # the first calls warm the session
                times.append(elapsed)
        return times
    finally:
        clients.close()


def mcp_search(size: int, queries: int, folder: Path) -> list[float]:
    """Milliseconds per search_documents call through /mcp over ``size`` chunks."""
    dim = 384
    rng = random.Random(size + dim)
    nrng = np.random.default_rng(size + dim)
    stored = nrng.standard_normal((size, dim)).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    database = _database(size, dim, folder, stored, rng)
    qrng = random.Random(7)
    searcher = Searcher(database, lambda _m, _t, _c: [_unit(qrng, dim)])
    info = CollectionInfo("bench", "synthetic", dim, ("bench",), 1, size, ())
    tools = DocumentTools(
        DocumentAccess(
            lambda q, cols, k, c: searcher.search(q, list(cols), k=k, cancel=c),
            searcher.fetch,
            lambda: [info],
        )
    )
    settings = ServerSettings(require_key=False).model_copy(update={"port": 0})
    runner = ServerRunner(
        services_for(
            Any,
            ResolverDirectory(Any),
            settings,
            None,  # type: ignore[arg-type]
            mcp=McpEndpoint(tools),
        )
    )
    runner.start()
    url = runner.url.rstrip("/").removesuffix("/v1") + "/mcp"
    times: list[float] = []

    async def main() -> None:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for n in range(queries + 5):
                words = " ".join(qrng.choices(VOCAB[20:2000], k=3))
                started = time.perf_counter()
                result = await session.call_tool(
                    "search_documents", {"query": words, "collection": "bench"}
                )
                elapsed = (time.perf_counter() - started) * 1000
                assert not result.is_error, result
                if n >= 5:
                    times.append(elapsed)

    try:
        anyio.run(main)
    finally:
        runner.stop()
        database.close()
    return times


def _row(name: str, times: list[float], target: str) -> str:
    return f"| {name} | {len(times)} | {_p(times, 0.5):.1f} | {_p(times, 0.95):.1f} | {target} |"


def main() -> None:
    """Run both measurements and print a Markdown table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--db-dir", type=Path, default=None)
    args = parser.parse_args()
    folder = args.db_dir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    overhead = tool_overhead(args.calls, folder)
    search = mcp_search(args.size, args.queries, folder)
    print("| measurement | n | p50 ms | p95 ms | target |\n|---|---|---|---|---|")
    print(_row("tool call overhead (stdio calculator)", overhead, "p50 <= 30 ms"))
    print(_row(f"search_documents via /mcp, {args.size:,} chunks", search, "p95 <= 50 ms"))


if __name__ == "__main__":
    main()
