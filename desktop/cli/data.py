"""``edgedesk data show|move|use``: where chats, indexes, keys and models live, and moving them.

``encrypt|decrypt|export-key|import-key`` are ``desktop.cli.encryption``'s.
"""

from __future__ import annotations

import argparse
import json
import sys

from desktop.base.config import user_path
from desktop.base.crash import shown
from desktop.base.errors import ConfigError
from desktop.base.filebytes import format_bytes
from desktop.cli.arguments import context_for
from desktop.cli.encryption import add_data_actions
from desktop.datafolder import cancel_move, pending_move, request_move


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``data`` verb group."""
    from desktop.cli.options import common_options

    data = sub.add_parser(
        "data", parents=[common_options()], help="where EdgeDesk keeps your data, and moving it"
    )
    dsub = data.add_subparsers(dest="data_verb", metavar="ACTION", required=True)
    show = dsub.add_parser(
        "show",
        parents=[common_options()],
        help="print the data folder and any move waiting for the next start",
    )
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=handle_show)
    move = dsub.add_parser(
        "move",
        parents=[common_options()],
        help="move chats, indexes, keys and models to FOLDER now",
    )
    move.add_argument("folder", metavar="FOLDER")
    move.set_defaults(handler=handle_move)
    use = dsub.add_parser(
        "use", parents=[common_options()], help="switch to FOLDER as it is (copies nothing)"
    )
    use.add_argument("folder", metavar="FOLDER")
    use.set_defaults(handler=handle_use)
    add_data_actions(dsub)


def handle_show(args: argparse.Namespace) -> int:
    """Print the folders in use."""
    ctx = context_for(args, require_data=False)
    pending = pending_move(ctx.paths)
    info = {
        "data_dir": str(ctx.paths.data_dir),
        "models_dir": str(ctx.paths.models_dir),
        "database": str(ctx.paths.database),
        "config_dir": str(ctx.paths.config_dir),
        "set_by": ctx.effective.sources.get("data_location", "default"),
        "pending_move": None
        if pending is None
        else {"target": str(pending.target), "move": pending.move},
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"data:     {info['data_dir']}  ({info['set_by']})")
    print(f"models:   {info['models_dir']}")
    print(f"database: {info['database']}")
    print(f"settings: {info['config_dir']}")
    if pending is not None:
        verb = "move to" if pending.move else "switch to"
        print(f"waiting:  {verb} {pending.target} at the next start")
    return 0


def _progress(done: int, total: int) -> None:
    share = done * 100 // total if total else 100
    print(
        f"\rmoving {format_bytes(done)} / {format_bytes(total)} ({share}%)",
        end="",
        file=sys.stderr,
        flush=True,
    )


def _relocate(args: argparse.Namespace, *, move: bool) -> int:
    ctx = context_for(args, require_data=False)
    target = user_path(args.folder).resolve()
    if not move and not target.is_dir():
        # A typo would otherwise switch to a new empty folder: every chat seems gone.
        raise ConfigError(
            f"{shown(target)} is not an existing folder; to take your data there use "
            f"'edgedesk data move {shown(args.folder)}', to start empty there create the "
            "folder first"
        )
    request_move(ctx.paths, ctx.effective, target, move=move)
    if ctx.data_lock is not None:
        ctx.data_lock.release()  # this process must not count as "still using it"
    after = context_for(
        args,
        apply_moves=True,
        require_data=False,
        show_notice=False,
        move_progress=_progress if move else None,
    )
    if move:
        print(file=sys.stderr)
    if pending_move(ctx.paths) is not None:
        cancel_move(ctx.paths)  # not "will move later": this command promised it now
        raise ConfigError(
            "another EdgeDesk window or server is using your data; quit it "
            "and try again (nothing was moved)"
        )
    if after.notice:
        print(f"edgedesk: {shown(after.notice, 2000)}", file=sys.stderr)
    if after.paths.data_dir.resolve() != target:
        return 1  # the reason was printed as the context's notice
    after.audit.record(
        "data.moved" if move else "data.switched",
        source=str(ctx.paths.data_dir),
        target=str(after.paths.data_dir),
    )
    print(f"data folder: {after.paths.data_dir}")
    return 0


def handle_move(args: argparse.Namespace) -> int:
    """Move the data folder now; all or nothing."""
    return _relocate(args, move=True)


def handle_use(args: argparse.Namespace) -> int:
    """Point EdgeDesk at another data folder without copying anything."""
    return _relocate(args, move=False)
