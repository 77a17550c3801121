"""``edgedesk chats list|export|rm``: the saved conversations on this device."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from desktop.cli.context import context_for
from desktop.errors import InvalidRequest
from desktop.store.chats import ChatStore


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``chats`` verb group."""
    from desktop.cli import common_options

    common = common_options()
    chats = sub.add_parser("chats", parents=[common], help="list, export and delete "
                           "saved conversations")
    csub = chats.add_subparsers(dest="chats_verb", metavar="ACTION", required=True)
    listing = csub.add_parser("list", parents=[common], help="saved conversations, newest first")
    listing.add_argument("--search", metavar="WORDS", help="only conversations with these words")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=handle_list)
    export = csub.add_parser("export", parents=[common], help="export as Markdown or JSON")
    export.add_argument("ids", nargs="*", type=int, metavar="ID", help="default: all")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="default: stdout")
    export.set_defaults(handler=handle_export)
    rm = csub.add_parser("rm", parents=[common], help="delete conversations")
    rm.add_argument("ids", nargs="*", type=int, metavar="ID")
    rm.add_argument("--all", action="store_true", help="delete every conversation and scrub "
                    "the database file")
    rm.set_defaults(handler=handle_rm)


def _store(args: argparse.Namespace) -> ChatStore:
    return context_for(args).chat_store  # retention is applied as it opens


def _delete_stored_responses(args: argparse.Namespace) -> None:
    """``rm --all`` also deletes what the local API stored (Responses API ``store``)."""
    ctx = context_for(args)
    try:
        kept = ctx.response_store
        if kept.enabled:
            print(f"deleted {kept.delete_all()} stored API responses")
    finally:
        ctx.close()


def handle_list(args: argparse.Namespace) -> int:
    """Print the conversations."""
    store = _store(args)
    try:
        convs = store.list_conversations(search=args.search)
    finally:
        store.close()
    if args.json:
        print(json.dumps([{"id": c.id, "title": c.title, "model": c.model, "tags": list(c.tags),
                           "created": c.created, "updated": c.updated} for c in convs],
                         ensure_ascii=False, indent=2))
        return 0
    if not convs:
        print("no saved conversations")
    for conv in convs:
        when = datetime.fromtimestamp(conv.updated).strftime("%Y-%m-%d %H:%M")
        print(f"{conv.id:>6}  {when}  {conv.title or '(untitled)'}  [{conv.model or '-'}]")
    return 0


def handle_export(args: argparse.Namespace) -> int:
    """Write the export to a file or stdout."""
    store = _store(args)
    try:
        ids = args.ids or None
        text = store.export_json(ids) if args.format == "json" else store.export_markdown(ids)
    finally:
        store.close()
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(text)
    return 0


def handle_rm(args: argparse.Namespace) -> int:
    """Delete the given conversations, or all of them."""
    if bool(args.ids) == bool(args.all):
        raise InvalidRequest("name conversation ids to delete, or --all (not both)")
    store = _store(args)
    try:
        if args.all:
            print(f"deleted {store.delete_all()} conversations")
            _delete_stored_responses(args)
            return 0
        missing = [i for i in args.ids if not store.delete(i)]
    finally:
        store.close()
    if missing:
        raise InvalidRequest(f"no conversation with id {missing[0]}")
    print(f"deleted {len(args.ids)} conversation(s)")
    return 0
