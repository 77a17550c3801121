"""Real MCP servers for the tests, written with the SDK and run over stdio.

``python mcp_servers.py KIND``: ``calc`` (add, divide), ``crash`` (its tool kills the
process), ``hang`` (its tool never answers), ``big`` (one tool returning 1 MB).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer


def build(kind: str) -> MCPServer:
    """The server of ``kind``."""
    app = MCPServer(kind)
    if kind == "calc":

        @app.tool()
        def add(a: int, b: int) -> int:
            """Add two whole numbers."""
            return a + b

        @app.tool()
        def divide(a: float, b: float) -> float:
            """Divide a by b."""
            return a / b
    elif kind == "crash":

        @app.tool()
        def explode() -> str:
            """Crash the server."""
            os._exit(3)
    elif kind == "hang":

        @app.tool()
        def wait_forever() -> str:
            """Never answer."""
            while True:
                time.sleep(60)
    elif kind == "big":

        @app.tool()
        def megabyte() -> str:
            """Return one megabyte of text."""
            return "x" * (1024 * 1024)

    return app


if __name__ == "__main__":
    build(sys.argv[1]).run()
