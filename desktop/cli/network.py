"""``edgedesk network log``: every connection EdgeDesk made or refused, with its purpose."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict

from desktop.cli.arguments import context_for


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``network`` verb group."""
    from desktop.cli.options import common_options

    network = sub.add_parser(
        "network", parents=[common_options()], help="what EdgeDesk sent over the network"
    )
    nsub = network.add_subparsers(dest="network_verb", metavar="ACTION", required=True)
    log = nsub.add_parser(
        "log", parents=[common_options()], help="show the outbound connection log"
    )
    log.add_argument("--limit", type=int, default=50, metavar="N", help="last N entries")
    log.add_argument("--json", action="store_true")
    log.set_defaults(handler=handle_log)


def handle_log(args: argparse.Namespace) -> int:
    """Print the network log, newest last."""
    ctx = context_for(args)
    entries = ctx.net.entries(max(args.limit, 1))
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=2))
        return 0
    if not entries:
        print(f"no network connections recorded ({ctx.net.log_path})")
        return 0
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.time))
        verdict = "BROKEN " if e.broken_off else "sent   " if e.allowed else "BLOCKED"
        detail = e.reason
        if e.broken_off:  # how much arrived tells a partial answer from a whole one
            detail += f"; {e.bytes_received} bytes received"
        print(
            f"{when}  {verdict}  {e.method:<4} {e.host}{e.path}  — {e.purpose}"
            + (f" ({detail})" if detail else "")
        )
    return 0
