"""``edgedesk mcp serve``: this machine's indexed documents as an MCP server over stdio,
for local agents' config files (Claude Code, Codex, Continue)."""

from __future__ import annotations

import argparse

from desktop.cli.arguments import context_for


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` verb group."""
    from desktop.cli.options import common_options

    mcp = sub.add_parser(
        "mcp",
        parents=[common_options()],
        help="EdgeDesk's documents as an MCP server for local agents",
    )
    msub = mcp.add_subparsers(dest="mcp_verb", metavar="ACTION", required=True)
    serve = msub.add_parser(
        "serve",
        parents=[common_options()],
        help="serve search_documents, list_collections and read_document_passage over "
        "stdio (e.g. claude mcp add edgedesk -- edgedesk mcp serve)",
    )
    serve.set_defaults(handler=handle_serve)


def handle_serve(args: argparse.Namespace) -> int:
    """Serve until the client closes standard input (stdout carries only the protocol)."""
    from desktop.server import document_server

    ctx = context_for(args)
    try:
        document_server(ctx.document_tools()).run()
    finally:
        ctx.close()
    return 0
