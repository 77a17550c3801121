"""``edgedesk docs add|list|search|rm`` and ``edgedesk ask``: chat with your own documents."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from desktop.base.config import user_path
from desktop.base.crash import shown
from desktop.base.defaults import DEFAULT_EMBEDDING_MODEL
from desktop.base.errors import InvalidRequest
from desktop.chat import ChatCore, Conversation, was_cited
from desktop.cli.arguments import context_for, text_arg
from desktop.cli.chat import default_chat_model
from desktop.cli.options import check_sampling
from desktop.cli.tool_approval import (
    preapproved,
    stdin_lines,
    terminal_approver,
    yes_tools_option,
)
from desktop.engine import Delta
from desktop.resolve import looks_like_path
from desktop.retrieval import Hit, IndexProgress, IndexReport


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``docs`` verb group and ``ask``."""
    from desktop.cli.options import common_options, sampling_options

    common = common_options()
    docs = sub.add_parser("docs", parents=[common], help="index and search your documents")
    dsub = docs.add_subparsers(dest="docs_verb", metavar="ACTION", required=True)
    add = dsub.add_parser(
        "add",
        parents=[common],
        help="add files or folders to a collection (again: rescan for changes)",
    )
    add.add_argument("paths", nargs="+", metavar="PATH", type=Path)
    add.add_argument("--collection", required=True, metavar="NAME", type=text_arg)
    add.add_argument(
        "--embedding-model",
        metavar="ID_OR_PATH",
        default=None,
        help=f"embedding model (default {DEFAULT_EMBEDDING_MODEL}; "
        "a new model re-indexes the collection)",
    )
    add.set_defaults(handler=handle_add)
    listing = dsub.add_parser("list", parents=[common], help="collections and their sizes")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=handle_list)
    search = dsub.add_parser("search", parents=[common], help="hybrid search (vectors + words)")
    search.add_argument("query", metavar="QUERY", type=text_arg)
    search.add_argument(
        "--collection",
        action="append",
        metavar="NAME",
        type=text_arg,
        help="search only this collection (repeatable; default all)",
    )
    search.add_argument("-k", type=int, default=5, metavar="N", help="hits to show")
    search.set_defaults(handler=handle_search)
    rm = dsub.add_parser("rm", parents=[common], help="delete a collection's index (not files)")
    rm.add_argument("name", metavar="NAME", type=text_arg)
    rm.set_defaults(handler=handle_rm)

    ask = sub.add_parser(
        "ask", parents=[common], help="answer a question from a collection, with numbered citations"
    )
    ask.add_argument("question", metavar="QUESTION", type=text_arg)
    ask.add_argument("--collection", action="append", required=True, metavar="NAME", type=text_arg)
    ask.add_argument(
        "--model",
        metavar="ID_OR_PATH",
        default=None,
        help="chat model (default: the first downloaded catalog chat model)",
    )
    ask.add_argument("-k", type=int, default=5, metavar="N", help="sources to give the model")
    yes_tools_option(ask)
    sampling_options(ask, max_tokens=512, temperature=0.2)
    ask.set_defaults(handler=handle_ask)


def model_ref(ref: str) -> str:
    """A model reference that still works from another folder (paths made absolute)."""
    return str(user_path(ref).resolve()) if looks_like_path(ref) else ref


def _progress(update: IndexProgress) -> None:
    if update.waiting:
        print(
            "another EdgeDesk window or command is indexing this collection; waiting for "
            "it to finish (Ctrl+C stops waiting)",
            file=sys.stderr,
            flush=True,
        )
    elif sys.stderr.isatty() and update.path:
        chunks = f" ({update.chunks_embedded} chunks)" if update.chunks_embedded else ""
        name = shown(Path(update.path).name, 50) + chunks
        print(
            f"\r[{update.files_done + 1}/{update.files_total}] {name[:66]:66}",
            end="",
            file=sys.stderr,
            flush=True,
        )


def _print_report(report: IndexReport) -> None:
    if sys.stderr.isatty():
        print("\r" + " " * 78 + "\r", end="", file=sys.stderr)
    for refused in report.refused:
        print(f"refused {shown(refused.path, 500)}: {shown(refused.reason)}")
    for skipped in report.skipped:
        print(f"skipped {shown(skipped.path, 500)}: {shown(skipped.reason)}")
    print(
        f"{shown(report.collection)}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed, "
        f"{len(report.skipped)} skipped; {report.chunks_embedded} chunks embedded"
        + (f"; {len(report.refused)} refused" if report.refused else "")
        + (" (cancelled)" if report.cancelled else "")
    )


def handle_add(args: argparse.Namespace) -> int:
    """Index PATHs into the collection (incrementally)."""
    ctx = context_for(args)
    library = ctx.library
    cancel = threading.Event()
    model = model_ref(args.embedding_model) if args.embedding_model else None
    try:
        report = library.add(args.collection, args.paths, model, progress=_progress, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        ctx.close()
    _print_report(report)
    return 0


def handle_list(args: argparse.Namespace) -> int:
    """Print the collections."""
    ctx = context_for(args)
    library = ctx.library
    try:
        infos = library.collections()
    finally:
        ctx.close()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": i.name,
                        "embedding_model": i.embedding_model,
                        "dimension": i.dimension,
                        "roots": list(i.roots),
                        "documents": i.documents,
                        "chunks": i.chunks,
                        "skipped": [{"path": s.path, "reason": s.reason} for s in i.skipped],
                    }
                    for i in infos
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not infos:
        print("no collections yet; add one with: edgedesk docs add PATH --collection NAME")
    for info in infos:
        print(
            f"{shown(info.name)}: {info.documents} documents, {info.chunks} chunks, "
            f"{len(info.skipped)} skipped, model {shown(info.embedding_model)}"
        )
        for root in info.roots:
            print(f"  {shown(root, 500)}")
    return 0


def handle_search(args: argparse.Namespace) -> int:
    """Print the best chunks with file, page/lines and a snippet."""
    if args.k < 1:
        raise InvalidRequest("-k must be at least 1")
    ctx = context_for(args)
    searcher = ctx.searcher
    try:
        hits = searcher.search(args.query, args.collection, k=args.k)
    finally:
        ctx.close()
    if not hits:
        print("no matches")
    for number, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())
        print(
            f"{number}. {shown(hit.location, 500)}\n   {shown(snippet[:200])}"
            f"{'…' if len(snippet) > 200 else ''}"
        )
    return 0


def handle_rm(args: argparse.Namespace) -> int:
    """Delete a collection's index."""
    ctx = context_for(args)
    library = ctx.library
    try:
        if not library.remove(args.name):
            raise InvalidRequest(f"no collection named '{shown(args.name)}'")
        # Its name only (as a key's scope names it), never a document's text; as the
        # window records its removals.
        ctx.audit.record("collection.removed", collection=args.name, source="cli")
    finally:
        ctx.close()
    print(f"removed collection {shown(args.name)} (your files are untouched)")
    return 0


def handle_ask(args: argparse.Namespace) -> int:
    """Answer from the collection, streaming, then list the cited sources."""
    check_sampling(args)
    ctx = context_for(args)
    searcher = ctx.searcher
    cancel = threading.Event()
    collections = list(args.collection)

    def search(question: str, _named: Sequence[str]) -> list[Hit]:
        return searcher.search(question, collections, k=args.k)  # every --collection

    try:
        model = model_ref(args.model) if args.model else default_chat_model(ctx)
        # No saver: ask keeps no chat. Tools: the documents tools and, asked at a terminal
        # (or pre-approved with --yes-tools), the MCP servers'.
        core = ChatCore(
            ctx.scheduler, search=search, tools=ctx.toolbox, preapproved=preapproved(args)
        )
        chat = Conversation(
            model=model,
            collection=collections[0],
            temperature=args.temperature,
            max_tokens=args.max_tokens,
        )

        def show(chunk: Delta) -> None:
            sys.stdout.write(chunk.text)
            sys.stdout.flush()

        turn = core.run(
            core.ask(chat, args.question),
            show,
            cancel,
            approve=terminal_approver(stdin_lines)
            if sys.stdin is not None and sys.stdin.isatty()
            else None,
        )
        print()
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        ctx.close()
    print("\nSources:" if was_cited(turn) else "\nSources given to the model (none cited):")
    for c in turn.citations:
        print(f"[{c.number}] {shown(c.location, 500)}")
    return 0
