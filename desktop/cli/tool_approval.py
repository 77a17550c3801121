"""Asking in the terminal before a tool runs: the tool, its server and its arguments, then
"Allow once / Always for this tool / Deny" from the next line of input.

Runs on the main thread (the terminal's only one), inside the core's blocking turn.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator

from desktop.base.crash import shown
from desktop.chat import Decision
from desktop.engine import ToolCall
from desktop.tools import ToolSpec

ANSWERS: dict[str, Decision] = {
    "o": "once",
    "once": "once",
    "y": "once",
    "yes": "once",
    "a": "always",
    "always": "always",
    "d": "deny",
    "deny": "deny",
    "n": "deny",
    "no": "deny",
}


def yes_tools_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--yes-tools NAME,…`` (run these MCP tools without asking)."""
    parser.add_argument(
        "--yes-tools",
        metavar="NAME,…",
        default="",
        help="run these MCP tools without asking (unless the policy "
        "McpRequireApproval is set); documents tools never ask",
    )


def preapproved(args: argparse.Namespace) -> set[str]:
    """The tool names ``--yes-tools`` lists."""
    return {n.strip() for n in str(getattr(args, "yes_tools", "") or "").split(",") if n.strip()}


def terminal_approver(
    lines: Callable[[], Iterator[str | None] | None],
) -> Callable[[ToolSpec, ToolCall], Decision]:
    """An approver reading its answer from ``lines()`` (the chat's own input), or
    denying when there is none (a script that ended, no terminal)."""

    def approve(spec: ToolSpec, call: ToolCall) -> Decision:
        print(
            f"\n[tool] {shown(spec.name)} on {shown(spec.server)} wants to run with "
            f"{shown(call.arguments, 2000)}",
            file=sys.stderr,
        )
        source = lines()
        while source is not None:
            print(
                "Allow [o]nce, [a]lways for this tool, or [d]eny? ",
                end="",
                file=sys.stderr,
                flush=True,
            )
            answer = next(source, None)
            if answer is None:
                break
            decision = ANSWERS.get(answer.strip().lower())
            if decision is not None:
                print(f"({decision})", file=sys.stderr)
                return decision
        print("(denied: no answer)", file=sys.stderr)
        return "deny"

    return approve


def stdin_lines() -> Iterator[str | None] | None:
    """Lines typed at a terminal (None when standard input is not one)."""
    if sys.stdin is None or not sys.stdin.isatty():
        return None

    def typed() -> Iterator[str | None]:
        while True:
            try:
                yield input()
            except EOFError:
                return

    return typed()
