"""``edgedesk audit show [--since WHEN] [--json]`` and ``edgedesk audit verify``.

The log itself is ``desktop.base.audit``; it is on when the setting ``audit_log`` (policy
``AuditLog``) is. ``verify`` exits 0 when the chain holds and 1 when a line was removed,
edited or cut off, or the log, its head or its copy in the OS keyring is missing or
disagrees, naming each place.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time

from desktop.base.audit import AuditLog
from desktop.base.errors import InvalidRequest
from desktop.cli.arguments import context_for

_UNITS = {"m": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` verb."""
    from desktop.cli.options import common_options

    audit = sub.add_parser(
        "audit", parents=[common_options()], help="the audit log: show it, verify its hash chain"
    )
    asub = audit.add_subparsers(dest="audit_verb", metavar="ACTION", required=True)
    show = asub.add_parser("show", parents=[common_options()], help="print the events")
    show.add_argument(
        "--since",
        type=since_arg,
        metavar="WHEN",
        help="only events after WHEN: a date/time (2026-12-01, "
        "2026-12-01T09:00) or an age (30m, 12h, 7d)",
    )
    show.add_argument("--json", action="store_true", help="one JSON object a line")
    show.set_defaults(handler=handle_show)
    verify = asub.add_parser(
        "verify",
        parents=[common_options()],
        help="check that no line was removed or edited (exit 1 if so)",
    )
    verify.set_defaults(handler=handle_verify)


def since_arg(text: str) -> float:
    """``--since``: an ISO date/time (UTC unless it says otherwise) or an age, as Unix time."""
    value = text.strip()
    unit = _UNITS.get(value[-1:].lower())
    if unit is not None and value[:-1].replace(".", "", 1).isdigit():
        return time.time() - float(value[:-1]) * unit
    try:
        when = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is neither a date/time (2026-12-01T09:00) nor an age (12h, 7d)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def _log(args: argparse.Namespace) -> AuditLog:
    ctx = context_for(args)
    try:
        audit = ctx.audit
    finally:
        ctx.close()
    if not isinstance(audit, AuditLog):
        raise InvalidRequest(
            "the audit log is off; IT turns it on with the policy AuditLog "
            "(or set audit_log = true in settings.toml)"
        )
    return audit


def handle_show(args: argparse.Namespace) -> int:
    """Print the events, oldest first."""
    audit = _log(args)
    for entry in audit.entries(args.since):
        if args.json:
            print(json.dumps(entry, ensure_ascii=False))
            continue
        rest = "  ".join(f"{k}={v}" for k, v in entry.items() if k not in ("time", "event"))
        print(f"{entry.get('time', '')}  {entry.get('event', '')}  {rest}")
    return 0


def handle_verify(args: argparse.Namespace) -> int:
    """Check the chain; print each break; exit 1 when there is one."""
    audit = _log(args)
    result = audit.verify()
    if result.ok:
        print(f"audit log intact: {result.lines} lines in {result.files} file(s), {audit.folder}")
        anchor = audit.anchor
        if anchor is not None and anchor.read() is None:
            print(
                f"note: its head is not anchored in {anchor.where} (none usable here), so "
                "the whole folder deleted and started again would not be noticed"
            )
        return 0
    for problem in result.problems:
        print(f"broken: {problem}")
    print(
        f"the audit log in {audit.folder} was changed: {len(result.problems)} problem(s) in "
        f"{result.lines} lines"
    )
    return 1
