"""From a command line to a context: flags applied as settings, warnings said once.

``context_for`` is how the window and every command start: it turns the global flags
into settings for the composition root (``desktop.root.context.build_context``) and tells the user
about an invalid policy, a data move's outcome and flags the policy overrides.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

from desktop.base.config import flatten
from desktop.datafolder import ProgressFn as MoveProgress
from desktop.root.context import AppContext, build_context


def _to_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def flag_settings(args: argparse.Namespace) -> dict[str, object]:
    """Settings overridden by the global flags (``--offline``)."""
    return {"offline": True} if getattr(args, "offline", None) else {}


def context_for(
    args: argparse.Namespace,
    extra: Mapping[str, Any] | None = None,
    *,
    apply_moves: bool = False,
    require_data: bool = True,
    move_progress: MoveProgress | None = None,
    show_notice: bool = True,
    warn: Callable[[str], None] | None = None,
) -> AppContext:
    """The context for one command or window, with its flags applied as settings.

    Only the window and ``edgedesk data move|use`` carry out a requested data move: any
    other command must not start a copy of many gigabytes without saying so. Warnings
    (an invalid policy, a flag the policy overrides) go to ``warn``, by default stderr.
    """
    say = warn or _to_stderr
    flags = {**flag_settings(args), **(extra or {})}
    ctx = build_context(
        cli_settings=flags,
        apply_moves=apply_moves,
        require_data=require_data,
        move_progress=move_progress,
        passphrase=getattr(args, "unlocked_passphrase", None),
        tell=lambda line: say(f"edgedesk: {line}"),
    )
    if ctx.policy_problem:
        say(f"edgedesk: warning: {ctx.policy_problem}")
    ctx.audit  # noqa: B018 - a policy change since the last start goes into the audit log
    if ctx.notice and show_notice:
        say(f"edgedesk: {ctx.notice}")
    # The policy wins over flags; say so rather than let a flag look obeyed.
    forced = flatten(ctx.effective.settings.model_dump())
    for key in sorted(k for k in flags if ctx.effective.is_locked(k) and forced.get(k) != flags[k]):
        say(
            f"edgedesk: warning: {key} is set by your organization; the command-line "
            "value is ignored"
        )
    return ctx
