"""``edgedesk chats list|export|import|rm``: the saved conversations on this device."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from desktop.base.config import user_path
from desktop.base.crash import shown
from desktop.base.errors import InvalidRequest
from desktop.cli.arguments import context_for, text_arg
from desktop.store import (
    MAX_ID,
    ChatStore,
    folder_for,
    is_sealed,
    reader_beside,
    seal,
    unseal,
    write_beside,
)

MAX_IMPORT_BYTES = 512 * 1024 * 1024  # a bigger "export" is not one; refuse before reading


def conversation_id(text: str) -> int:
    """An ``ID`` argument: a whole number SQLite can hold (argparse reports a bad one)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{shown(text, 40)}' is not a conversation id "
            "(a whole number from 'edgedesk chats list')"
        ) from None
    if not 1 <= value <= MAX_ID:
        raise argparse.ArgumentTypeError(f"no conversation has id {shown(text, 40)}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``chats`` verb group."""
    from desktop.cli.options import common_options

    common = common_options()
    chats = sub.add_parser(
        "chats", parents=[common], help="list, export and delete saved conversations"
    )
    csub = chats.add_subparsers(dest="chats_verb", metavar="ACTION", required=True)
    listing = csub.add_parser("list", parents=[common], help="saved conversations, newest first")
    listing.add_argument(
        "--search", metavar="WORDS", type=text_arg, help="only conversations with these words"
    )
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=handle_list)
    export = csub.add_parser("export", parents=[common], help="export as Markdown or JSON")
    export.add_argument("ids", nargs="*", type=conversation_id, metavar="ID", help="default: all")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="default: stdout")
    export.add_argument(
        "--encrypt",
        action="store_true",
        help="write a file only a passphrase (asked now) opens: AES-256-GCM, "
        "key from scrypt; 'chats import' asks for it",
    )
    export.add_argument(
        "--passphrase-stdin",
        action="store_true",
        help="with --encrypt: read the passphrase from the first line of stdin",
    )
    export.set_defaults(handler=handle_export)
    rm = csub.add_parser("rm", parents=[common], help="delete conversations")
    rm.add_argument("ids", nargs="*", type=conversation_id, metavar="ID")
    rm.add_argument(
        "--all", action="store_true", help="delete every conversation and scrub the database file"
    )
    rm.set_defaults(handler=handle_rm)
    imp = csub.add_parser(
        "import",
        parents=[common],
        help="add the conversations of a JSON export (from 'chats export --format json')",
    )
    imp.add_argument("file", metavar="FILE", help="the export file, or - for standard input")
    imp.add_argument(
        "--passphrase-stdin",
        action="store_true",
        help="an encrypted export's passphrase from the first line of stdin",
    )
    imp.set_defaults(handler=handle_import)


def _store(args: argparse.Namespace) -> ChatStore:
    return context_for(args).chat_store  # retention is applied as it opens


def handle_list(args: argparse.Namespace) -> int:
    """Print the conversations."""
    store = _store(args)
    try:
        convs = store.list_conversations(search=args.search)
    finally:
        store.close()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": c.id,
                        "title": c.title,
                        "model": c.model,
                        "tags": list(c.tags),
                        "created": c.created,
                        "updated": c.updated,
                    }
                    for c in convs
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not convs:
        print(
            f"no conversation matches '{shown(args.search)}'"
            if args.search
            else "no saved conversations"
        )
    for conv in convs:
        when = datetime.fromtimestamp(conv.updated).strftime("%Y-%m-%d %H:%M")
        print(
            f"{conv.id:>6}  {when}  {shown(conv.title) or '(untitled)'}  "
            f"[{shown(conv.model or '-')}]"
        )
    return 0


def handle_export(args: argparse.Namespace) -> int:
    """Write the export to a file or stdout."""
    store = _store(args)
    # Attachments go as files beside an export written to a file; on stdout, and in an
    # encrypted export (plain files beside it would give its content away), the JSON
    # carries their bytes and the Markdown only names them.
    beside = args.output is not None and not args.encrypt
    files = folder_for(args.output) if beside else None
    try:
        ids = args.ids or None
        text = (
            store.export_json(ids, files=files)
            if args.format == "json"
            else store.export_markdown(ids, files=files)
        )
        attached = store.export_files(ids) if beside else {}
    finally:
        store.close()
    data = (text + "\n").encode("utf-8", "surrogatepass")
    if args.encrypt:
        data = seal(data, _export_passphrase(args.passphrase_stdin))
    if args.output:
        write_export(args.output, data)
        print(f"wrote {shown(args.output)}" + (" (encrypted)" if args.encrypt else ""))
        folder = write_beside(args.output, attached)
        if folder is not None:
            print(f"wrote {len(attached)} attachment(s) to {shown(folder)}")
    elif not args.encrypt:
        print(text)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    _audit(
        args,
        "chats.exported",
        format=args.format,
        conversations=len(args.ids) if args.ids else "all",
        to="file" if args.output else "stdout",
        encrypted=bool(args.encrypt),
    )
    return 0


def _export_passphrase(from_stdin: bool) -> str:
    """The passphrase to seal an export with: asked twice on a terminal."""
    import getpass

    from desktop.cli.encryption import read_passphrase

    value = read_passphrase(from_stdin, "Passphrase for the export: ")
    if not from_stdin and sys.stdin.isatty() and getpass.getpass("Again: ") != value:
        raise InvalidRequest("the two passphrases differ; nothing was written")
    return value


def _audit(args: argparse.Namespace, event: str, **fields: object) -> None:
    """One event in the audit log (no titles, no text: what was done, to how many)."""
    ctx = context_for(args, show_notice=False, warn=lambda _line: None)
    try:
        ctx.audit.record(event, **fields)
    finally:
        ctx.close()


def write_export(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` whole or not at all; a failure is one clear message.

    A regular file is written beside itself and renamed over, so a full disk never
    leaves a previous export cut short; a device or pipe (``/dev/stdout``) is written
    directly.
    """
    target = user_path(path)
    if target.is_dir():
        raise InvalidRequest(
            f"{shown(path)} is a folder; name a file to write, e.g. {shown(path / 'chats.md')}"
        )
    folder = target.parent
    if not folder.is_dir():
        raise InvalidRequest(
            f"the folder {shown(folder)} does not exist; create it or choose another place"
        )
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    try:
        if target.exists() and not target.is_file():
            with target.open("wb") as handle:
                handle.write(data)
            return
        fd, tmp = tempfile.mkstemp(prefix=".edgedesk-export-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InvalidRequest(
            f"cannot write {shown(path)} ({exc.strerror or exc}); nothing was written there"
        ) from None


def handle_import(args: argparse.Namespace) -> int:
    """Add the conversations of an export file; all of them or none."""
    text = _read_import(args.file, args.passphrase_stdin)
    store = _store(args)
    try:
        added = store.import_json(
            text, None if args.file == "-" else reader_beside(Path(args.file))
        )
    finally:
        store.close()
    print(
        f"imported {len(added)} conversation(s)"
        + (
            f" (ids {added[0].id}–{added[-1].id})"
            if len(added) > 1
            else f" (id {added[0].id})"
            if added
            else ""
        )
    )
    return 0


def _read_import(name: str, passphrase_stdin: bool = False) -> str:
    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_IMPORT_BYTES + 1)
        else:
            path = user_path(name)
            if path.is_dir():
                raise InvalidRequest(f"{shown(name)} is a folder; name an export file")
            with path.open("rb") as handle:
                data = handle.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise InvalidRequest(f"cannot read {shown(name)} ({exc.strerror or exc})") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise InvalidRequest(
            f"{shown(name)} is larger than {MAX_IMPORT_BYTES // 2**20} MiB; not an EdgeDesk export"
        )
    if is_sealed(data):
        from desktop.cli.encryption import read_passphrase

        data = unseal(data, read_passphrase(passphrase_stdin, "Passphrase of the export: "))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidRequest(
            f"{shown(name)} is not an EdgeDesk conversation export (not UTF-8 text)"
        ) from None


def handle_rm(args: argparse.Namespace) -> int:
    """Delete the given conversations, or all of them."""
    if bool(args.ids) == bool(args.all):
        raise InvalidRequest("name conversation ids to delete, or --all (not both)")
    if args.all:
        return _delete_everything(args)
    store = _store(args)
    try:
        deleted = store.delete_many(args.ids)
    finally:
        store.close()
    print(f"deleted {deleted} conversation(s)")
    _audit(args, "chats.deleted", conversations=deleted, ids=list(args.ids))
    return 0


def _delete_everything(args: argparse.Namespace) -> int:
    """``rm --all``: every conversation, and what the local API stored (Responses API
    ``store``), each counted apart; then the file is scrubbed once."""
    ctx = context_for(args)
    try:
        store = ctx.chat_store
        kept = ctx.response_store  # hidden conversations over the chat store's connection
        # The responses go first, unscrubbed: the chats' delete_all then scrubs (VACUUMs)
        # the one file they share, once, with both gone.
        responses = kept.delete_before(float("inf")) if kept.enabled else None
        count = store.delete_all()
        print(f"deleted {count} conversations")
        if responses is not None:
            print(f"deleted {responses} stored API responses")
        # Both counts: `rm --all` after API clients kept 300 responses must not read as
        # "conversations: 0" alone (responses is left out where none can be kept).
        ctx.audit.record("chats.deleted", conversations=count, responses=responses, all=True)
    finally:
        ctx.close()
    return 0
