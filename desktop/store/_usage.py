"""Usage rows: one per finished API request, content-free; their summaries and upkeep.

A row holds when, who (the key's name, never the secret), which client program, which
model and route, how it ended and how many tokens and milliseconds it took: never a
prompt, an answer or a token id (``docs/privacy.md`` lists the columns).

As rows are added, their hourly bucket (per hour, key, client, model, route, status and
error) is added to in the same transaction: sums, and histograms of the durations in 2 %
wide buckets (``bucket_of``). ``summary`` and ``series`` read only those buckets, so a
month's table is a few thousand rows read rather than a million sorted; percentiles are
within 1 % of the exact ones. Single rows are dropped after ``ROLLUP_AFTER_S`` (their
buckets stay) and everything after ``usage_retention_days``.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import numpy as np

from desktop.store._db import Database

WINDOW_CLIENT = "EdgeDesk"  # the client of the window's own chats
WINDOW_ROUTE = "window"  # their route: not requests to the server
ROLLUP_AFTER_S = 7 * 86_400.0  # single rows are kept a week, then summed by the hour
DEFAULT_RETENTION_DAYS = 90
GROUPINGS = ("key", "model", "client", "day", "route")
Grouping = Literal["key", "model", "client", "day", "route"]
_BASE = 1.02  # histogram buckets: each 2 % wider than the last
# A stored histogram: (bucket, count) pairs, packed; merged with one bincount per group.
HIST_DTYPE = np.dtype([("bucket", "<u2"), ("count", "<u4")])
_LOG_BASE = math.log(_BASE)
_MIN_MS = 0.1

# SQL of one grouping over the hourly buckets (``time`` is the hour's start).
CSV_FIELDS = (
    "group",
    "requests",
    "errors",
    "errors_by_kind",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "ttft_p99_ms",
    "total_p50_ms",
    "total_p90_ms",
    "total_p99_ms",
    "tokens_per_s",
)

# The last rows before a time, newest first, along the index on ``time`` (``recent``).
RECENT_SQL = (
    "SELECT time, key_name, client, model, route, status, error_kind, prompt_tokens, "
    "cached_tokens, completion_tokens, ttft_ms, total_ms FROM usage_requests "
    "WHERE time < ? AND route IS NOT ? ORDER BY time DESC LIMIT ?"
)
WINDOW_GROUP = "(window)"  # by key: the window's own chats ("-": requests without a key)
_GROUP_SQL: dict[str, str] = {
    # The window's own chats have no key either, but are not "no key" requests to the
    # server: they are a group of their own (WINDOW_GROUP).
    "key": (
        f"coalesce(key_name, CASE route WHEN '{WINDOW_ROUTE}' THEN '{WINDOW_GROUP}' ELSE '-' END)"
    ),
    "model": "coalesce(model, '-')",
    "client": "client",
    "route": "route",
    # The hour, named by its local day in Python (``_day``): SQLite's localtime per row
    # was most of the time of a month's table.
    "day": "time",
}


def bucket_of(ms: float) -> int:
    """The histogram bucket of a duration in milliseconds (0: at most 0.1 ms)."""
    if ms <= _MIN_MS:
        return 0
    return min(65_535, 1 + int(math.log(ms / _MIN_MS) / _LOG_BASE))  # stored as uint16


def bucket_ms(bucket: int) -> float:
    """A bucket's middle value in milliseconds (within 1 % of every duration in it)."""
    if bucket <= 0:
        return _MIN_MS
    return float(_MIN_MS * _BASE ** (bucket - 0.5))


@dataclass(frozen=True)
class UsageRow:
    """One finished request, without its content."""

    time: float  # Unix time it finished
    key_name: str | None  # the API key's name (None: no key, or the window's own chat)
    client: str  # "Codex", "curl", "EdgeDesk"… (``server.usage.client_of``)
    model: str | None
    route: str  # "/v1/chat/completions", "/api/chat", "mcp", "window"…
    status: int
    error_code: str | None = None  # "context_length_exceeded", "key_scope"… (None: fine)
    prompt_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, how many came from a kept prefix
    completion_tokens: int = 0
    ttft_ms: float | None = None
    total_ms: float = 0.0

    @property
    def failed(self) -> bool:
        """Whether the request ended in an error (a status of 400 and up, or a code)."""
        return self.status >= 400 or self.error_code is not None

    @property
    def generation_ms(self) -> float:
        """Milliseconds spent generating after the first token (0: nothing generated)."""
        if self.completion_tokens <= 0:
            return 0.0
        return max(0.0, self.total_ms - (self.ttft_ms or 0.0))

    @property
    def tokens_per_s(self) -> float | None:
        """Generated tokens per second after the first one (None: not a generation)."""
        gen = self.generation_ms
        return self.completion_tokens * 1000.0 / gen if gen > 0 else None


def percentile(histogram: dict[int, int], q: float) -> float | None:
    """The ``q`` quantile (0..1) of a bucket→count histogram, in ms (None: empty)."""
    total = sum(histogram.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for bucket in sorted(histogram):
        seen += histogram[bucket]
        if seen >= rank:
            return round(bucket_ms(bucket), 1)
    return None  # pragma: no cover - rank never exceeds the total


@dataclass
class UsageGroup:
    """Sums and percentiles of the requests of one group (a key, a model, a day…)."""

    name: str
    requests: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # error kind -> count
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    generation_ms: float = 0.0
    ttft: dict[int, int] = field(default_factory=dict)  # histogram bucket -> count
    total: dict[int, int] = field(default_factory=dict)

    @property
    def error_count(self) -> int:
        """Requests that failed, of every kind."""
        return sum(self.errors.values())

    @property
    def tokens_per_s(self) -> float | None:
        """Generated tokens per second of generating (None: nothing generated)."""
        if self.generation_ms <= 0:
            return None
        return round(self.completion_tokens * 1000.0 / self.generation_ms, 1)

    def as_dict(self) -> UsageSummary:
        """The group as ``stats --json`` writes it (times in ms)."""
        return {
            "name": self.name,
            "requests": self.requests,
            "errors": self.error_count,
            "errors_by_kind": dict(sorted(self.errors.items())),
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "ttft_ms": {f"p{q}": percentile(self.ttft, q / 100) for q in (50, 90, 99)},
            "total_ms": {f"p{q}": percentile(self.total, q / 100) for q in (50, 90, 99)},
            "tokens_per_s": self.tokens_per_s,
        }


@dataclass
class SeriesPoint:
    """One time slot of one group: what a chart draws."""

    start: float  # the slot's first second (Unix time)
    group: str
    requests: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total: dict[int, int] = field(default_factory=dict)

    def latency(self, q: float) -> float | None:
        """The ``q`` quantile of total time in this slot (ms)."""
        return percentile(self.total, q)


def error_kind(status: int, error_code: str | None) -> str | None:
    """What ``stats`` calls a failure: its code, else its status (None: not a failure)."""
    if error_code:
        return error_code
    return f"http_{status}" if status >= 400 else None


class UsageStore:
    """The usage rows in the app's database.

    Every method is one blocking call holding the database's lock; the recorder's writer
    thread inserts, ``edgedesk stats``, the window's Usage tab and housekeeping read and
    fold, each from its own thread.
    """

    def __init__(self, database: Database, *, clock: Any = time.time) -> None:
        self.database = database
        self._clock = clock

    def add(self, rows: Sequence[UsageRow]) -> None:
        """Insert ``rows`` and add them to their hourly buckets, in one transaction."""
        if not rows:
            return
        values = []
        buckets: dict[tuple[Any, ...], list[Any]] = defaultdict(lambda: [0, 0, 0, 0, 0.0, {}, {}])
        for r in rows:
            kind = error_kind(r.status, r.error_code)
            ttft = None if r.ttft_ms is None else bucket_of(r.ttft_ms)
            total = bucket_of(r.total_ms)
            values.append(
                (
                    r.time,
                    r.key_name,
                    r.client,
                    r.model,
                    r.route,
                    r.status,
                    kind,
                    r.prompt_tokens,
                    r.cached_tokens,
                    r.completion_tokens,
                    r.ttft_ms,
                    r.total_ms,
                    r.tokens_per_s,
                    r.generation_ms,
                    ttft,
                    total,
                )
            )
            hour = float(int(r.time // 3600) * 3600)
            b = buckets[(hour, r.key_name, r.client, r.model, r.route, r.status, kind)]
            b[0] += 1
            b[1] += r.prompt_tokens
            b[2] += r.cached_tokens
            b[3] += r.completion_tokens
            b[4] += r.generation_ms
            if ttft is not None:
                b[5][ttft] = b[5].get(ttft, 0) + 1
            b[6][total] = b[6].get(total, 0) + 1
        with self.database.transaction():
            self.database.conn.executemany(
                "INSERT INTO usage_requests(time, key_name, client, model, route, status, "
                "error_kind, prompt_tokens, cached_tokens, completion_tokens, ttft_ms, "
                "total_ms, tokens_per_s, generation_ms, ttft_bucket, total_bucket) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            for ident, sums in buckets.items():
                self._add_hour(ident, sums)

    def rows(self, since: float = 0.0) -> list[UsageRow]:
        """The single rows since ``since`` (Unix time), oldest first (tests, export)."""
        with self.database.lock:
            found = self.database.query(
                "SELECT time, key_name, client, model, route, status, error_kind, "
                "prompt_tokens, cached_tokens, completion_tokens, ttft_ms, total_ms "
                "FROM usage_requests WHERE time >= ? ORDER BY time",
                (since,),
            )
        return [UsageRow(*row) for row in found]

    def recent(
        self, limit: int, before: float | None = None, skip_route: str | None = None
    ) -> list[UsageRow]:
        """The last ``limit`` single rows finished before ``before`` (Unix time; None: any),
        newest first, leaving out route ``skip_route`` (the Server tab's request list).

        Read backwards along ``usage_requests_by_time``: a few hundred rows, however many
        the table holds.
        """
        until = math.inf if before is None else before
        with self.database.lock:
            found = self.database.query(RECENT_SQL, (until, skip_route, max(0, limit)))
        return [UsageRow(*row) for row in found]

    def count(self) -> tuple[int, int]:
        """How many single rows and hourly buckets are kept."""
        with self.database.lock:
            single = self.database.query("SELECT count(*) FROM usage_requests")[0][0]
            hourly = self.database.query("SELECT count(*) FROM usage_hourly")[0][0]
        return int(single), int(hourly)

    def _hours(self, grp: str, since: float, until: float | None) -> list[Any]:
        """The hourly buckets from the hour holding ``since`` up to ``until``."""
        until = self._clock() + 1 if until is None else until
        with self.database.lock:
            # ``grp`` is a fixed expression of _GROUP_SQL, never user text.
            return self.database.query(
                f"SELECT time, {grp}, error_kind, requests, prompt_tokens, "  # noqa: S608
                "cached_tokens, completion_tokens, generation_ms, ttft_histogram, "
                "total_histogram FROM usage_hourly WHERE time >= ? AND time < ?",
                (since - since % 3600, until),
            )

    def summary(
        self, since: float, by: Grouping = "key", until: float | None = None
    ) -> list[UsageGroup]:
        """Requests, errors, tokens and percentiles per group, busiest first.

        Read from the hourly buckets, so the range starts at the hour holding ``since``:
        a table of a month is a few thousand buckets, not every request.
        """
        if by not in _GROUP_SQL:
            raise ValueError(f"unknown grouping {by!r}")
        groups: dict[str, UsageGroup] = {}
        blobs: dict[str, tuple[list[bytes], list[bytes]]] = {}
        for _hour, name, kind, n, prompt, cached, completion, gen, ttft, total in self._hours(
            _GROUP_SQL[by], since, until
        ):
            key = _day(name) if by == "day" else str(name)
            g = groups.get(key)
            if g is None:
                g = groups[key] = UsageGroup(key)
                blobs[key] = ([], [])
            _add_sums(g, kind, (n, prompt, cached, completion, gen))
            blobs[key][0].append(ttft)
            blobs[key][1].append(total)
        for key, (ttft_blobs, total_blobs) in blobs.items():
            groups[key].ttft = _unpack(ttft_blobs)
            groups[key].total = _unpack(total_blobs)
        return sorted(groups.values(), key=lambda g: (-g.requests, g.name))

    def series(
        self,
        since: float,
        step_s: float,
        by: Grouping = "key",
        until: float | None = None,
    ) -> list[SeriesPoint]:
        """Per time slot of ``step_s`` seconds (whole hours) from the hour holding ``since``,
        and per group: requests, errors, tokens and the total-time histogram (the
        window's charts)."""
        if by not in _GROUP_SQL:
            raise ValueError(f"unknown grouping {by!r}")
        start = since - since % 3600
        points: dict[tuple[int, str], SeriesPoint] = {}
        blobs: dict[tuple[int, str], list[bytes]] = {}
        for hour, name, kind, n, prompt, _c, completion, _g, _t, total in self._hours(
            _GROUP_SQL[by], since, until
        ):
            key = (int((hour - start) // step_s), _day(name) if by == "day" else str(name))
            p = points.get(key)
            if p is None:
                p = points[key] = SeriesPoint(start + key[0] * step_s, key[1])
                blobs[key] = []
            p.requests += n
            p.errors += n if kind is not None else 0
            p.prompt_tokens += int(prompt or 0)
            p.completion_tokens += int(completion or 0)
            blobs[key].append(total)
        for key, found in blobs.items():
            points[key].total = _unpack(found)
        return sorted(points.values(), key=lambda p: (p.start, p.group))

    def roll_up(self, now: float | None = None) -> int:
        """Drop single rows older than ``ROLLUP_AFTER_S``: their hourly buckets (kept up to
        date as rows are added) hold their sums and histograms. Returns how many went."""
        cutoff = (self._clock() if now is None else now) - ROLLUP_AFTER_S
        with self.database.transaction():
            gone = self.database.execute("DELETE FROM usage_requests WHERE time < ?", (cutoff,))
        return int(gone.rowcount or 0)

    def _add_hour(self, ident: tuple[Any, ...], sums: list[Any]) -> None:
        """Add one hour's sums (requests, prompt, cached and completion tokens,
        generation ms, the two histograms) to its bucket, made when it does not exist."""
        n, prompt, cached, completion, gen, ttft, total = sums
        found = self.database.query(
            "SELECT id, ttft_histogram, total_histogram FROM usage_hourly WHERE time IS ? AND "
            "key_name IS ? AND client IS ? AND model IS ? AND route IS ? AND status IS ? "
            "AND error_kind IS ?",
            ident,
        )
        if found:
            row_id, old_ttft, old_total = found[0]
            _merge(ttft, _unpack([old_ttft]))
            _merge(total, _unpack([old_total]))
            self.database.execute(
                "UPDATE usage_hourly SET requests = requests + ?, prompt_tokens = "
                "prompt_tokens + ?, cached_tokens = cached_tokens + ?, completion_tokens = "
                "completion_tokens + ?, generation_ms = generation_ms + ?, ttft_histogram = ?, "
                "total_histogram = ? WHERE id = ?",
                (n, prompt, cached, completion, gen, _pack(ttft), _pack(total), row_id),
            )
            return
        self.database.execute(
            "INSERT INTO usage_hourly(time, key_name, client, model, route, status, "
            "error_kind, requests, prompt_tokens, cached_tokens, completion_tokens, "
            "generation_ms, ttft_histogram, total_histogram) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*ident, n, prompt, cached, completion, gen, _pack(ttft), _pack(total)),
        )

    def prune(self, retention_days: int, now: float | None = None) -> int:
        """Delete rows and buckets older than ``retention_days``; returns how many went."""
        cutoff = (self._clock() if now is None else now) - retention_days * 86_400.0
        with self.database.transaction():
            gone = self.database.execute("DELETE FROM usage_requests WHERE time < ?", (cutoff,))
            single = int(gone.rowcount or 0)
            gone = self.database.execute("DELETE FROM usage_hourly WHERE time < ?", (cutoff,))
        return single + int(gone.rowcount or 0)

    def upkeep(self, retention_days: int, now: float | None = None) -> tuple[int, int]:
        """The hourly pass: prune past ``retention_days``, then drop single rows older than
        a week; (pruned, rolled up)."""
        pruned = self.prune(retention_days, now)
        return pruned, self.roll_up(now)


def _add_sums(g: UsageGroup, kind: str | None, sums: Sequence[Any]) -> None:
    """Add (requests, prompt, cached, completion tokens, generation ms) to ``g``."""
    n, prompt, cached, completion, gen = sums
    g.requests += int(n)
    if kind is not None:
        g.errors[kind] = g.errors.get(kind, 0) + int(n)
    g.prompt_tokens += int(prompt or 0)
    g.cached_tokens += int(cached or 0)
    g.completion_tokens += int(completion or 0)
    g.generation_ms += float(gen or 0.0)


@functools.lru_cache(maxsize=4096)
def _day(hour: float) -> str:
    """The local calendar day of an hour's start, as ``--by day`` names it."""
    return time.strftime("%Y-%m-%d", time.localtime(hour))


def _pack(histogram: dict[int, int]) -> bytes:
    """A histogram as stored: packed (bucket, count) pairs."""
    return np.array(sorted(histogram.items()), dtype=HIST_DTYPE).tobytes()


def _unpack(blobs: Sequence[bytes | None]) -> dict[int, int]:
    """The sum of stored histograms (a damaged one, of a wrong length, adds nothing)."""
    whole = b"".join(b for b in blobs if b and len(b) % HIST_DTYPE.itemsize == 0)
    if not whole:
        return {}
    pairs = np.frombuffer(whole, dtype=HIST_DTYPE)
    dense = np.bincount(pairs["bucket"], weights=pairs["count"])
    (found,) = np.nonzero(dense)
    return {int(i): int(dense[i]) for i in found}


class UsageSummary(TypedDict):
    """A usage group as ``stats --json`` writes it (times in ms, None: no request)."""

    name: str
    requests: int
    errors: int
    errors_by_kind: dict[str, int]
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    ttft_ms: dict[str, float | None]  # "p50", "p90", "p99"
    total_ms: dict[str, float | None]
    tokens_per_s: float | None


def _merge(into: dict[int, int], more: dict[int, int]) -> None:
    for bucket, n in more.items():
        into[bucket] = into.get(bucket, 0) + n


def csv_rows(groups: Sequence[UsageGroup]) -> list[dict[str, str | float]]:
    """The groups as CSV rows (``CSV_FIELDS``): ``stats --csv`` and the window's Export."""
    rows: list[dict[str, str | float]] = []
    for g in groups:
        d = g.as_dict()
        rows.append(
            {
                "group": g.name,
                "requests": g.requests,
                "errors": g.error_count,
                "errors_by_kind": ";".join(f"{k}={v}" for k, v in d["errors_by_kind"].items()),
                "prompt_tokens": g.prompt_tokens,
                "cached_tokens": g.cached_tokens,
                "completion_tokens": g.completion_tokens,
                **{f"ttft_{q}_ms": _blank(v) for q, v in d["ttft_ms"].items()},
                **{f"total_{q}_ms": _blank(v) for q, v in d["total_ms"].items()},
                "tokens_per_s": _blank(g.tokens_per_s),
            }
        )
    return rows


def csv_text(groups: Sequence[UsageGroup]) -> str:
    """The groups as CSV text with a header row."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(csv_rows(groups))
    return buffer.getvalue()


def _blank(value: float | None) -> str | float:
    return "" if value is None else value
