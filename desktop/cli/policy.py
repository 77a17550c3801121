"""``edgedesk policy show``: the settings in force and where each one came from."""

from __future__ import annotations

import argparse
import json

from desktop.base.config import flatten
from desktop.cli.arguments import context_for


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``policy`` verb group."""
    from desktop.cli.options import common_options

    policy = sub.add_parser(
        "policy", parents=[common_options()], help="show the machine policy and effective settings"
    )
    psub = policy.add_subparsers(dest="policy_verb", metavar="ACTION", required=True)
    show = psub.add_parser(
        "show", parents=[common_options()], help="effective settings and the source of each"
    )
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=handle_show)


def handle_show(args: argparse.Namespace) -> int:
    """Print every setting with its value, source and lock state."""
    ctx = context_for(args)
    eff = ctx.effective
    rows = [
        {
            "key": key,
            "value": value,
            "source": eff.sources.get(key, "default"),
            "locked": eff.is_locked(key),
        }
        for key, value in sorted(flatten(eff.settings.model_dump()).items())
    ]
    if args.json:
        print(json.dumps({"policy_problem": ctx.policy_problem, "settings": rows}, indent=2))
        return 0
    if ctx.policy_problem:
        print(f"WARNING: {ctx.policy_problem}")
    width = max(len(str(r["key"])) for r in rows)
    for row in rows:
        lock = "  [locked: set by your organization]" if row["locked"] else ""
        print(f"{row['key']:<{width}}  {json.dumps(row['value']):<24} {row['source']}{lock}")
    return 0
