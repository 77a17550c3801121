"""Build the app context for a CLI invocation from its flags."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

from desktop.app import AppContext, build_context
from desktop.config import flatten


def context_for(args: argparse.Namespace, extra: Mapping[str, Any] | None = None, *,
                apply_moves: bool = False, require_data: bool = True,
                move_progress: Callable[[int, int], None] | None = None,
                show_notice: bool = True) -> AppContext:
    """The composition root, with this invocation's flags applied as settings.

    Only the window and ``edgedesk data move|use`` carry out a requested data move: any
    other command must not start a copy of many gigabytes without saying so.
    """
    from desktop.cli.options import cli_settings

    flags = {**cli_settings(args), **(extra or {})}
    ctx = build_context(cli_settings=flags, apply_moves=apply_moves,
                        require_data=require_data, move_progress=move_progress)
    if ctx.policy_problem:
        print(f"edgedesk: warning: {ctx.policy_problem}", file=sys.stderr)
    if ctx.notice and show_notice:
        print(f"edgedesk: {ctx.notice}", file=sys.stderr)
    # The policy wins over flags; say so rather than let a flag look obeyed.
    forced = flatten(ctx.effective.settings.model_dump())
    for key in sorted(k for k in flags
                      if ctx.effective.is_locked(k) and forced.get(k) != flags[k]):
        print(f"edgedesk: warning: {key} is set by your organization; the command-line "
              "value is ignored", file=sys.stderr)
    return ctx


def text_arg(value: str) -> str:
    """An argparse type for words, names and prompts: text, not a file name's raw bytes.

    A shell passes any bytes; ones that are not UTF-8 arrive as lone surrogates that no
    database, model or terminal accepts (file and folder arguments keep them).
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            "holds bytes that are not UTF-8 text; check the terminal's encoding") from None
    return value
