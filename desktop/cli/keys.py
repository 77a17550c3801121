"""``edgedesk keys create|list|revoke``: one API key per client, stored hashed, scoped.

``keys create NAME [--models A,B] [--endpoints chat,embeddings,documents] [--expires 30d]
[--rate N/min] [--read-only-docs COLLECTION]``; ``keys list`` shows scopes and last use.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import TypeVar

from desktop.base.crash import shown
from desktop.base.errors import EdgeDeskError
from desktop.cli.arguments import context_for, text_arg

T = TypeVar("T")


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _checked(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type from a parser raising EdgeDeskError (a usage error, exit 2)."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except EdgeDeskError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    return convert


def _duration(text: str) -> float:
    from desktop.server import parse_duration

    return _checked(parse_duration)(text)


def _rate(text: str) -> int:
    from desktop.server import parse_rate

    return _checked(parse_rate)(text)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``keys`` verb and its actions."""
    from desktop.cli.options import common_options

    parser = sub.add_parser(
        "keys",
        parents=[common_options()],
        help="API keys for the local server",
        description="Manage the keys clients use to call the local API.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a key for a client (shown once)")
    create.add_argument(
        "name", metavar="NAME", type=text_arg, help="the client, e.g. vscode or scripts"
    )
    create.add_argument(
        "--models", type=_names, metavar="A,B", help="only these models (default: any)"
    )
    create.add_argument(
        "--endpoints",
        type=_names,
        metavar="E,F",
        help="only these endpoints: chat, embeddings, documents (default: all)",
    )
    create.add_argument(
        "--expires",
        type=_duration,
        metavar="30d",
        help="expire after this long (d, h, w; default: never, or the policy's MaxKeyLifetimeDays)",
    )
    create.add_argument(
        "--rate",
        type=_rate,
        metavar="N/min",
        help="at most N requests a minute (429 with Retry-After beyond)",
    )
    create.add_argument(
        "--read-only-docs",
        type=text_arg,
        metavar="COLLECTION",
        help="may read the document collection COLLECTION (and nothing "
        "else of the documents endpoint)",
    )
    listing = actions.add_parser("list", help="list the keys, their scopes and last use")
    listing.add_argument("--json", action="store_true")
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
        key = store.create(
            args.name,
            models=args.models,
            endpoints=args.endpoints,
            expires_in_s=args.expires,
            rate_per_min=args.rate,
            read_only_docs=args.read_only_docs,
        )
        print(key)
        print(
            f"This is the only time the key for '{shown(args.name)}' is shown; store it now.",
            file=sys.stderr,
        )
    elif args.action == "list":
        keys = store.list()
        if args.json:
            print(
                json.dumps(
                    [
                        {
                            "name": i.name,
                            "created": i.created,
                            "hint": i.hint,
                            "last_used": i.last_used,
                            **asdict(i.scope),
                        }
                        for i in keys
                    ],
                    indent=2,
                )
            )
            return 0
        if not keys:
            print("no API keys; create one with 'edgedesk keys create NAME'", file=sys.stderr)
        for info in keys:
            print(
                f"{shown(info.name)}\tcreated {info.created}\t…{info.hint}\t"
                f"{info.scope.describe()}\tlast used {info.last_used or 'never'}"
            )
    else:
        store.revoke(args.name)
        print(f"revoked the key of '{shown(args.name)}'", file=sys.stderr)
    return 0
