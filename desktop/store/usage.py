"""Usage rows: one per finished API request, content-free; their summaries and upkeep.

A row holds when, who (the key's name, never the secret), which client program, which
model and route, how it ended and how many tokens and milliseconds it took: never a
prompt, an answer or a token id (``docs/privacy.md`` lists the columns). Rows older than
``ROLLUP_AFTER_S`` are folded into hourly buckets, which keep the sums and a histogram of
the durations, so percentiles over a month stay possible after the single rows are gone.

Durations are kept beside a histogram bucket number (``bucket_of``: 2 % wide buckets), so
percentiles are a ``GROUP BY`` in SQL over single rows and hourly buckets alike, rather
than a sort of every duration in Python: ``summary`` over a million rows stays well under
a second.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.store.db import Database

ROLLUP_AFTER_S = 7 * 86_400.0  # single rows are kept a week, then summed by the hour
DEFAULT_RETENTION_DAYS = 90
GROUPINGS = ("key", "model", "client", "day", "route")
Grouping = Literal["key", "model", "client", "day", "route"]
_BASE = 1.02  # histogram buckets: each 2 % wider than the last
_LOG_BASE = math.log(_BASE)
_MIN_MS = 0.1

# SQL of one grouping, the same expression over single rows and hourly buckets (both
# have key_name, model, client, route and a ``time`` column: the hour's start).
_GROUP_SQL: dict[str, str] = {
    "key": "coalesce(key_name, '-')",
    "model": "coalesce(model, '-')",
    "client": "client",
    "route": "route",
    "day": "strftime('%Y-%m-%d', time, 'unixepoch', 'localtime')",
}


def bucket_of(ms: float) -> int:
    """The histogram bucket of a duration in milliseconds (0: at most 0.1 ms)."""
    if ms <= _MIN_MS:
        return 0
    return 1 + int(math.log(ms / _MIN_MS) / _LOG_BASE)


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

    def as_dict(self) -> dict[str, Any]:
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
        """Insert ``rows`` in one transaction."""
        if not rows:
            return
        values = [
            (
                r.time,
                r.key_name,
                r.client,
                r.model,
                r.route,
                r.status,
                error_kind(r.status, r.error_code),
                r.prompt_tokens,
                r.cached_tokens,
                r.completion_tokens,
                r.ttft_ms,
                r.total_ms,
                r.tokens_per_s,
                r.generation_ms,
                None if r.ttft_ms is None else bucket_of(r.ttft_ms),
                bucket_of(r.total_ms),
            )
            for r in rows
        ]
        with self.database.transaction():
            self.database.conn.executemany(
                "INSERT INTO usage_requests(time, key_name, client, model, route, status, "
                "error_kind, prompt_tokens, cached_tokens, completion_tokens, ttft_ms, "
                "total_ms, tokens_per_s, generation_ms, ttft_bucket, total_bucket) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

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

    def count(self) -> tuple[int, int]:
        """How many single rows and hourly buckets are kept."""
        with self.database.lock:
            single = self.database.query("SELECT count(*) FROM usage_requests")[0][0]
            hourly = self.database.query("SELECT count(*) FROM usage_hourly")[0][0]
        return int(single), int(hourly)

    def summary(
        self, since: float, by: Grouping = "key", until: float | None = None
    ) -> list[UsageGroup]:
        """Requests, errors, tokens and percentiles per group since ``since``, busiest first."""
        if by not in _GROUP_SQL:
            raise ValueError(f"unknown grouping {by!r}")
        until = self._clock() + 1 if until is None else until
        grp = _GROUP_SQL[by]
        groups: dict[str, UsageGroup] = {}

        def group(name: Any) -> UsageGroup:
            key = str(name)
            found = groups.get(key)
            if found is None:
                found = groups[key] = UsageGroup(key)
            return found

        window = "time >= ? AND time < ?"
        with self.database.lock:
            # Fixed expressions from _GROUP_SQL, never user text.
            sums = self.database.query(
                f"SELECT {grp}, error_kind, count(*), sum(prompt_tokens), sum(cached_tokens), "  # noqa: S608
                f"sum(completion_tokens), sum(generation_ms) FROM usage_requests "
                f"WHERE {window} GROUP BY 1, 2",
                (since, until),
            )
            histograms = [
                (
                    kind,
                    self.database.query(
                        f"SELECT {grp}, {kind}_bucket, count(*) FROM usage_requests "  # noqa: S608
                        f"WHERE {window} AND {kind}_bucket IS NOT NULL GROUP BY 1, 2",
                        (since, until),
                    ),
                )
                for kind in ("ttft", "total")
            ]
            hourly = self.database.query(
                f"SELECT {grp}, error_kind, requests, prompt_tokens, cached_tokens, "  # noqa: S608
                f"completion_tokens, generation_ms, ttft_histogram, total_histogram "
                f"FROM usage_hourly WHERE {window}",
                (since, until),
            )
        for name, kind, n, prompt, cached, completion, gen in sums:
            _add_sums(group(name), kind, (n, prompt, cached, completion, gen))
        for kind, found in histograms:
            for name, bucket, n in found:
                hist = getattr(group(name), kind)
                hist[bucket] = hist.get(bucket, 0) + n
        for name, kind, n, prompt, cached, completion, gen, ttft, total in hourly:
            g = group(name)
            _add_sums(g, kind, (n, prompt, cached, completion, gen))
            _merge(g.ttft, ttft)
            _merge(g.total, total)
        return sorted(groups.values(), key=lambda g: (-g.requests, g.name))

    def series(
        self,
        since: float,
        step_s: float,
        by: Grouping = "key",
        until: float | None = None,
    ) -> list[SeriesPoint]:
        """Per time slot of ``step_s`` seconds from ``since`` and per group: requests,
        errors, tokens and the total-time histogram (what the window's charts draw)."""
        if by not in _GROUP_SQL:
            raise ValueError(f"unknown grouping {by!r}")
        until = self._clock() + 1 if until is None else until
        grp = _GROUP_SQL[by]
        slot = "CAST((time - ?) / ? AS INTEGER)"
        args = (since, step_s, since, until)
        with self.database.lock:
            sums = self.database.query(
                f"SELECT {slot}, {grp}, count(*), sum(error_kind IS NOT NULL), "  # noqa: S608
                "sum(prompt_tokens), sum(completion_tokens) FROM usage_requests "
                "WHERE time >= ? AND time < ? GROUP BY 1, 2",
                args,
            )
            hist = self.database.query(
                f"SELECT {slot}, {grp}, total_bucket, count(*) FROM usage_requests "  # noqa: S608
                "WHERE time >= ? AND time < ? GROUP BY 1, 2, 3",
                args,
            )
            hourly = self.database.query(
                f"SELECT {slot}, {grp}, requests, error_kind IS NOT NULL, prompt_tokens, "  # noqa: S608
                "completion_tokens, total_histogram FROM usage_hourly "
                "WHERE time >= ? AND time < ?",
                args,
            )
        points: dict[tuple[int, str], SeriesPoint] = {}

        def point(index: int, name: Any) -> SeriesPoint:
            key = (int(index), str(name))
            found = points.get(key)
            if found is None:
                found = points[key] = SeriesPoint(since + key[0] * step_s, key[1])
            return found

        for index, name, n, errors, prompt, completion in sums:
            p = point(index, name)
            p.requests += n
            p.errors += int(errors or 0)
            p.prompt_tokens += int(prompt or 0)
            p.completion_tokens += int(completion or 0)
        for index, name, bucket, n in hist:
            h = point(index, name).total
            h[bucket] = h.get(bucket, 0) + n
        for index, name, n, failed, prompt, completion, total in hourly:
            p = point(index, name)
            p.requests += n
            p.errors += n if failed else 0
            p.prompt_tokens += int(prompt or 0)
            p.completion_tokens += int(completion or 0)
            _merge(p.total, total)
        return sorted(points.values(), key=lambda p: (p.start, p.group))

    def roll_up(self, now: float | None = None) -> int:
        """Fold single rows older than ``ROLLUP_AFTER_S`` into hourly buckets; returns how
        many rows went. Idempotent: a bucket that exists already is added to."""
        cutoff = (self._clock() if now is None else now) - ROLLUP_AFTER_S
        cutoff -= cutoff % 3600  # whole hours only: a bucket is never split across passes
        with self.database.transaction():
            rows = self.database.query(
                "SELECT CAST(time / 3600 AS INTEGER) * 3600, key_name, client, model, route, "
                "status, error_kind, prompt_tokens, cached_tokens, completion_tokens, "
                "generation_ms, ttft_bucket, total_bucket FROM usage_requests WHERE time < ?",
                (cutoff,),
            )
            if not rows:
                return 0
            buckets: dict[tuple[Any, ...], list[Any]] = defaultdict(
                lambda: [0, 0, 0, 0, 0.0, {}, {}]
            )
            for hour, key, client, model, route, status, kind, p, c, o, gen, tb, ob in rows:
                b = buckets[(hour, key, client, model, route, status, kind)]
                b[0] += 1
                b[1] += p
                b[2] += c
                b[3] += o
                b[4] += gen or 0.0
                if tb is not None:
                    b[5][tb] = b[5].get(tb, 0) + 1
                b[6][ob] = b[6].get(ob, 0) + 1
            for ident, sums in buckets.items():
                self._add_hour(ident, sums)
            self.database.execute("DELETE FROM usage_requests WHERE time < ?", (cutoff,))
        return len(rows)

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
            _merge(ttft, old_ttft)
            _merge(total, old_total)
            self.database.execute(
                "UPDATE usage_hourly SET requests = requests + ?, prompt_tokens = "
                "prompt_tokens + ?, cached_tokens = cached_tokens + ?, completion_tokens = "
                "completion_tokens + ?, generation_ms = generation_ms + ?, ttft_histogram = ?, "
                "total_histogram = ? WHERE id = ?",
                (n, prompt, cached, completion, gen, _dump(ttft), _dump(total), row_id),
            )
            return
        self.database.execute(
            "INSERT INTO usage_hourly(time, key_name, client, model, route, status, "
            "error_kind, requests, prompt_tokens, cached_tokens, completion_tokens, "
            "generation_ms, ttft_histogram, total_histogram) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*ident, n, prompt, cached, completion, gen, _dump(ttft), _dump(total)),
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
        """The hourly pass: prune past ``retention_days``, then roll up; (pruned, rolled)."""
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


def _dump(histogram: dict[int, int]) -> str:
    return json.dumps({str(k): v for k, v in sorted(histogram.items())}, separators=(",", ":"))


def _merge(into: dict[int, int], stored: str | None) -> None:
    """Add a stored JSON histogram into ``into`` (a damaged one adds nothing)."""
    try:
        data = json.loads(stored or "{}")
    except ValueError:
        return
    if isinstance(data, dict):
        for k, v in data.items():
            if str(k).isdigit() and isinstance(v, int):
                into[int(k)] = into.get(int(k), 0) + v
