"""MCP servers written in the tests (tests/tools/mcp_servers.py), run over stdio."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import ServerConfig

SERVERS = Path(__file__).with_name("mcp_servers.py")


def server(kind: str, name: str | None = None) -> ServerConfig:
    """The test server ``kind`` as a user's mcp.json entry would start it."""
    return ServerConfig(name or kind, command=sys.executable, args=(str(SERVERS), kind))


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[McpClients]:
    """A client with short deadlines (a hung server costs the test 3 s, not 30)."""
    made = McpClients(
        log_dir=tmp_path / "logs",
        token=lambda _name: None,
        call_timeout_s=3.0,
        start_timeout_s=30.0,
    )
    yield made
    made.close()
