"""``edgedesk tools add|list|test|rm|forget|log``: MCP tool servers a chat's model may call."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from desktop.base.errors import InvalidRequest
from desktop.cli.arguments import context_for


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tools`` verb group."""
    from desktop.cli.options import common_options

    tools = sub.add_parser(
        "tools", parents=[common_options()], help="MCP tool servers a chat's model may call"
    )
    tsub = tools.add_subparsers(dest="tools_verb", metavar="ACTION", required=True)
    add = tsub.add_parser(
        "add",
        parents=[common_options()],
        help="add a server: 'tools add NAME -- COMMAND ARGS…' (stdio) or 'tools add NAME URL'",
        description="Add an MCP server to mcp.json: a command line after '--' (stdio), or "
        "the URL of a Streamable HTTP endpoint.",
    )
    add.add_argument("name", metavar="NAME")
    add.add_argument("target", nargs=argparse.REMAINDER, metavar="URL | -- COMMAND …")
    add.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable for a command-line server (repeatable)",
    )
    add.add_argument(
        "--token-stdin",
        action="store_true",
        help="read an HTTP server's bearer token from standard input (kept in the OS keyring only)",
    )
    add.set_defaults(handler=handle_add)
    listing = tsub.add_parser(
        "list",
        parents=[common_options()],
        help="configured servers, whether the policy allows them",
    )
    listing.add_argument("--json", action="store_true")
    listing.add_argument(
        "--tools", action="store_true", help="start each allowed server and list its tools"
    )
    listing.set_defaults(handler=handle_list)
    test = tsub.add_parser(
        "test", parents=[common_options()], help="start a server and list its tools"
    )
    test.add_argument("name", metavar="NAME")
    test.set_defaults(handler=handle_test)
    rm = tsub.add_parser("rm", parents=[common_options()], help="remove a server (and its token)")
    rm.add_argument("name", metavar="NAME")
    rm.set_defaults(handler=handle_rm)
    forget = tsub.add_parser(
        "forget",
        parents=[common_options()],
        help="ask again before a tool you allowed 'Always' runs",
    )
    forget.add_argument("server", metavar="SERVER")
    forget.add_argument(
        "tool", nargs="?", metavar="TOOL", help="one tool (default: every tool of SERVER)"
    )
    forget.set_defaults(handler=handle_forget)
    log = tsub.add_parser(
        "log",
        parents=[common_options()],
        help="the tool calls made (tool, server, time, ok; no content)",
    )
    log.add_argument("--limit", type=int, default=50)
    log.set_defaults(handler=handle_log)


def handle_add(args: argparse.Namespace) -> int:
    """Write the server into mcp.json (a token into the keyring)."""
    from desktop.tools import ServerConfig, check_url, token_set

    ctx = context_for(args)
    target = list(args.target)
    if target and target[0] == "--":
        target = target[1:]
    if not target:
        raise InvalidRequest(
            "give the server's command after '--' (tools add NAME -- "
            "COMMAND ARGS…) or its URL (tools add NAME URL)"
        )
    env = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidRequest(f"--env takes KEY=VALUE, not '{item}'")
        env[key] = value
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        config = ServerConfig(args.name, url=check_url(target[0]))
    else:
        config = ServerConfig(args.name, command=target[0], args=tuple(target[1:]), env=env)
    token = sys.stdin.readline().strip() if args.token_stdin else ""
    if args.token_stdin and (not token or any(c.isspace() for c in token)):
        raise InvalidRequest("no token on standard input (one line, no spaces)")
    ctx.tool_servers.add(config)
    if token:
        token_set(config.name, token)
    print(
        f"added tool server '{config.name}': {config.target}"
        f"{' (token in the OS keyring)' if token else ''}; "
        f"see 'edgedesk tools test {config.name}'"
    )
    reason = ctx.tool_servers.refusal(config)
    if reason is not None:
        print(f"note: it will not run here: {reason}", file=sys.stderr)
    return 0


def handle_list(args: argparse.Namespace) -> int:
    """Print the servers, who set them up, and whether they may run (and their tools)."""
    ctx = context_for(args)
    states = ctx.toolbox.states(start=args.tools)
    # Any: JSON rows for --json, read back by field for the table
    rows: list[dict[str, Any]] = [
        {
            "name": s.config.name,
            "target": s.config.target,
            "source": s.config.source,
            "transport": "http" if s.config.is_http else "stdio",
            "allowed": s.refusal is None,
            "refusal": s.refusal,
            "error": s.error,
            "tools": [t.name for t in s.tools],
        }
        for s in states
    ]
    builtins = sorted(ctx.toolbox.builtins)
    approvals = ctx.toolbox.approvals
    always = [f"{s}/{t}" for s, t in approvals.all()] if approvals is not None else []
    if args.json:
        print(
            json.dumps(
                {
                    "servers": rows,
                    "builtin_tools": builtins,
                    "always_allowed": always,
                    "allow_user_mcp": ctx.tool_servers.policy.allow_user,
                    "require_approval": ctx.toolbox.require_approval,
                },
                indent=2,
            )
        )
        return 0
    print(f"built-in (no approval needed): {', '.join(builtins)}")
    if not rows:
        print("no tool servers; add one with 'edgedesk tools add NAME -- COMMAND…'")
    for row in rows:
        state = "allowed" if row["allowed"] else "refused"
        print(
            f"{row['name']:<16} {row['transport']:<5} {row['source']:<7} {state:<8} {row['target']}"
        )
        if row["refusal"]:
            print(f"  {row['refusal']}")
        if row["error"]:
            print(f"  error: {row['error']}")
        if row["tools"]:
            print(f"  tools: {', '.join(row['tools'])}")
    if always:
        note = (
            " (not honoured: policy McpRequireApproval asks every time)"
            if ctx.toolbox.require_approval
            else ""
        )
        print(
            f"always allowed{note}: {', '.join(always)}; "
            "'edgedesk tools forget SERVER [TOOL]' asks again"
        )
    return 0


def handle_test(args: argparse.Namespace) -> int:
    """Start the server and print its tools (exit 1 with the reason when it cannot)."""
    from desktop.base.errors import ConfigError

    ctx = context_for(args)
    config = ctx.tool_servers.get(args.name)
    reason = ctx.tool_servers.refusal(config)
    if reason is not None:
        raise ConfigError(reason, kind="policy")
    tools = ctx.mcp_clients.tools(config)
    print(f"{config.name} ({config.target}) offers {len(tools)} tool(s):")
    for tool in tools:
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        print(f"  {tool.name}{': ' + first if first else ''}")
    return 0


def handle_rm(args: argparse.Namespace) -> int:
    """Remove a user server from mcp.json and forget its token."""
    ctx = context_for(args)
    ctx.tool_servers.remove(args.name)
    print(f"removed tool server '{args.name}'")
    return 0


def handle_forget(args: argparse.Namespace) -> int:
    """Forget "Always for this tool" answers: the next call asks again."""
    ctx = context_for(args)
    approvals = ctx.toolbox.approvals
    gone = approvals.forget(args.server, args.tool) if approvals is not None else 0
    what = f"{args.server}/{args.tool}" if args.tool else f"the tools of {args.server}"
    if not gone:
        print(f"no 'Always' answer kept for {what}")
        return 1
    print(f"forgot {gone} 'Always' answer(s) for {what}; the next call asks again")
    return 0


def handle_log(args: argparse.Namespace) -> int:
    """Print the last tool calls from the audit log (never arguments or results)."""
    import time

    ctx = context_for(args)
    entries = ctx.toolbox.audit.entries()[-max(1, args.limit) :]
    if not entries:
        print("no tool calls yet")
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.time))
        print(
            f"{when}  {e.server}/{e.tool}  {e.duration_ms:.0f} ms  "
            f"{'ok' if e.ok else 'failed: ' + e.error}"
        )
    return 0
