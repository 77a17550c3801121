"""``edgedesk keys create|list|revoke``: one API key per client, stored hashed."""

from __future__ import annotations

import argparse
import sys

from desktop.cli.context import context_for, text_arg
from desktop.crash import shown


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``keys`` verb and its actions."""
    from desktop.cli.options import common_options

    parser = sub.add_parser("keys", parents=[common_options()],
                            help="API keys for the local server",
                            description="Manage the keys clients use to call the local API.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a key for a client (shown once)")
    create.add_argument("name", metavar="NAME", type=text_arg,
                        help="the client, e.g. vscode or scripts")
    actions.add_parser("list", help="list the clients that have keys")
    revoke = actions.add_parser("revoke", help="delete a client's key; it stops working at once")
    revoke.add_argument("name", metavar="NAME", type=text_arg)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the action; returns the exit code."""
    # Through the composition root: the keys live in the data folder in use, which
    # ``edgedesk data move|use`` may have changed (a key revoked in the old folder
    # would still open the server).
    ctx = context_for(args)
    store = ctx.key_store
    if args.action == "create":
        key = store.create(args.name)
        print(key)
        print(f"This is the only time the key for '{shown(args.name)}' is shown; store it now.",
              file=sys.stderr)
    elif args.action == "list":
        keys = store.list()
        if not keys:
            print("no API keys; create one with 'edgedesk keys create NAME'", file=sys.stderr)
        for info in keys:
            print(f"{shown(info.name)}\tcreated {info.created}\t…{info.hint}")
    else:
        store.revoke(args.name)
        print(f"revoked the key of '{shown(args.name)}'", file=sys.stderr)
    return 0
