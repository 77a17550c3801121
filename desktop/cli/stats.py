"""``edgedesk stats [--since 24h|7d|30d] [--by key|model|client|day] [--json|--csv]``.

Reads the usage rows (``desktop.store._usage``) of the app database, also while
``edgedesk serve`` or the window writes them in another process (SQLite WAL): one line a
group with requests, errors by kind, tokens, p50/p90/p99 time to first token and total
time, and tokens per second. Content-free, as the rows are.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from desktop.cli.arguments import context_for
from desktop.store import UsageGroup, csv_text

RANGES = {"24h": 86_400.0, "7d": 7 * 86_400.0, "30d": 30 * 86_400.0}
BY = ("key", "model", "client", "day")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``stats`` verb."""
    from desktop.cli.options import common_options

    stats = sub.add_parser(
        "stats",
        parents=[common_options()],
        help="usage of the local API: requests, errors, tokens, latency per key, model…",
    )
    stats.add_argument("--since", choices=tuple(RANGES), default="24h", help="the range")
    stats.add_argument("--by", choices=BY, default="key", help="one line per key, model…")
    out = stats.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON document")
    out.add_argument("--csv", action="store_true", help="CSV with a header row (for IT)")
    stats.set_defaults(handler=handle_stats)


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f}s" if value >= 1000 else f"{value:.0f}ms"


def table(groups: Sequence[UsageGroup], by: str) -> str:
    """The groups as an aligned text table, with a total line."""
    head = [
        by,
        "requests",
        "errors",
        "prompt tok",
        "compl tok",
        "TTFT p50/p90/p99",
        "total p50/p90/p99",
        "tok/s",
    ]
    lines = [head]
    for g in groups:
        d = g.as_dict()
        kinds = ", ".join(f"{k} {v}" for k, v in d["errors_by_kind"].items())
        lines.append(
            [
                g.name,
                str(g.requests),
                f"{g.error_count}" + (f" ({kinds})" if kinds else ""),
                str(g.prompt_tokens),
                str(g.completion_tokens),
                "/".join(_ms(d["ttft_ms"][q]) for q in ("p50", "p90", "p99")),
                "/".join(_ms(d["total_ms"][q]) for q in ("p50", "p90", "p99")),
                "-" if g.tokens_per_s is None else f"{g.tokens_per_s:.1f}",
            ]
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in lines
    )


def handle_stats(args: argparse.Namespace) -> int:
    """Print the usage of the chosen range, grouped as asked."""
    ctx = context_for(args)
    try:
        collecting = ctx.settings.collect_usage
        since = time.time() - RANGES[args.since]
        groups = ctx.usage_store.summary(since, by=args.by)
    finally:
        ctx.close()
    if args.json:
        doc = {
            "since": args.since,
            "by": args.by,
            "collecting": collecting,
            "requests": sum(g.requests for g in groups),
            "errors": sum(g.error_count for g in groups),
            "groups": [g.as_dict() for g in groups],
        }
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return 0
    if args.csv:
        sys.stdout.write(csv_text(groups))
        return 0
    if not collecting:
        print("usage collection is off (policy CollectUsage or collect_usage = false)")
    if not groups:
        print(f"no API requests in the last {args.since}")
        return 0
    print(table(groups, args.by))
    return 0
