"""The usage store: its migration, summaries, hourly rollup, pruning and batched writer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop.server._usage import client_of
from desktop.store._db import applied_migrations, migrate, open_database
from desktop.store._migrations import MIGRATIONS
from desktop.store._usage import (
    RECENT_SQL,
    ROLLUP_AFTER_S,
    UsageRow,
    UsageStore,
    bucket_ms,
    bucket_of,
    percentile,
)
from desktop.store._usage_recorder import UsageRecorder

pytestmark = pytest.mark.fast

NOW = 1_800_000_000.0  # a fixed "now" (Jan 2027), whole hour
DAY = 86_400.0


def _row(when: float, key: str = "ide", total_ms: float = 100.0, **kw: object) -> UsageRow:
    fields: dict[str, object] = {
        "time": when,
        "key_name": key,
        "client": "curl",
        "model": "tiny",
        "route": "/v1/chat/completions",
        "status": 200,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "ttft_ms": total_ms / 2,
        "total_ms": total_ms,
    }
    fields.update(kw)
    return UsageRow(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> UsageStore:
    db = open_database(tmp_path / "edgedesk.db")
    yield UsageStore(db, clock=lambda: NOW)
    db.close()


def test_migration_15_adds_the_usage_tables_to_an_existing_database(tmp_path: Path) -> None:
    from desktop.store._db import Database

    old = Database(tmp_path / "old.db")
    migrate(old, MIGRATIONS[:14])
    assert migrate(old) == [15]
    assert applied_migrations(old)[-1] == (
        15,
        "content-free usage of the API, per request and by the hour",
    )
    columns = {row[1] for row in old.query("PRAGMA table_info(usage_requests)")}
    # Counts and times only: no column could hold a prompt or an answer.
    assert columns == {
        "id", "time", "key_name", "client", "model", "route", "status", "error_kind",
        "prompt_tokens", "cached_tokens", "completion_tokens", "ttft_ms", "total_ms",
        "tokens_per_s", "generation_ms", "ttft_bucket", "total_bucket",
    }  # fmt: skip
    plan = old.query("EXPLAIN QUERY PLAN SELECT count(*) FROM usage_requests WHERE time >= 1")
    assert "usage_requests_by_time" in str(plan)
    old.close()


def test_percentiles_are_within_two_percent_of_the_exact_ones() -> None:
    values = [float(v) for v in range(1, 1001)]
    hist: dict[int, int] = {}
    for v in values:
        hist[bucket_of(v)] = hist.get(bucket_of(v), 0) + 1
    for q, exact in ((0.5, 500.0), (0.9, 900.0), (0.99, 990.0)):
        got = percentile(hist, q)
        assert got is not None and abs(got - exact) / exact < 0.02, (q, got)
    assert percentile({}, 0.5) is None
    assert abs(bucket_ms(bucket_of(12_345.0)) - 12_345.0) / 12_345.0 < 0.01


def test_summary_groups_counts_errors_and_tokens(store: UsageStore) -> None:
    store.add(
        [
            _row(NOW - 60, "ide", 100),
            _row(NOW - 50, "ide", 200, status=404, error_code="model_not_found"),
            _row(NOW - 40, "notebook", 300, client="openai-python", model="bge"),
            _row(NOW - 30, "notebook", 300, status=403, error_code="key_scope"),
            _row(NOW - 2 * DAY, "ide", 50),  # outside 24 h
        ]
    )
    groups = {g.name: g for g in store.summary(NOW - DAY, by="key")}
    assert groups["ide"].requests == 2
    assert groups["ide"].errors == {"model_not_found": 1}
    assert groups["ide"].prompt_tokens == 20
    assert groups["notebook"].errors == {"key_scope": 1}
    assert {g.name for g in store.summary(NOW - DAY, by="client")} == {"curl", "openai-python"}
    assert {g.name: g.requests for g in store.summary(NOW - 3 * DAY, by="model")} == {
        "tiny": 4,
        "bge": 1,
    }
    days = store.summary(NOW - 3 * DAY, by="day")
    assert sum(g.requests for g in days) == 5 and len(days) >= 2
    d = groups["ide"].as_dict()
    assert d["total_ms"]["p50"] == pytest.approx(100, rel=0.02)
    assert d["total_ms"]["p99"] == pytest.approx(200, rel=0.02)
    # tok/s: 10 tokens over (100-50)+(200-100) ms of generating.
    assert d["tokens_per_s"] == pytest.approx(10 * 1000 / 150, rel=0.01)


def test_rollup_drops_old_rows_keeping_sums_and_percentiles_and_prune_drops_old_buckets(
    store: UsageStore,
) -> None:
    old = NOW - ROLLUP_AFTER_S - 3 * 3600
    store.add([_row(old + i, "ide", 100.0 + i) for i in range(50)])
    store.add([_row(old + 60, "ide", 500, status=500)])
    store.add([_row(NOW - 10, "ide", 100)])
    before = store.summary(NOW - 30 * DAY, by="key")[0].as_dict()
    pruned, rolled = store.upkeep(retention_days=90)
    assert (pruned, rolled) == (0, 51)
    assert store.count() == (1, 3)  # one fresh row; one bucket per (hour, status...)
    after = store.summary(NOW - 30 * DAY, by="key")[0].as_dict()
    assert after == before  # the same requests, errors, tokens and percentiles
    assert store.roll_up() == 0  # nothing left to fold: idempotent
    series = store.series(NOW - 30 * DAY, 86_400.0, by="key")
    assert sum(p.requests for p in series) == 52 and sum(p.errors for p in series) == 1

    assert store.prune(retention_days=7) == 2  # the two old hourly buckets
    assert store.count() == (1, 1)


def test_series_slots_requests_by_time_and_group(store: UsageStore) -> None:
    store.add([_row(NOW - 3600 * h - 5, "ide" if h % 2 else "ci") for h in range(6)])
    points = store.series(NOW - 6 * 3600, 3600.0, by="key")
    assert len(points) == 6
    assert {p.group for p in points} == {"ide", "ci"}
    assert all(p.requests == 1 and p.latency(0.5) is not None for p in points)


def test_recent_rows_come_newest_first_bounded_and_read_along_the_time_index(
    store: UsageStore,
) -> None:
    store.add([_row(NOW - 60 * i, f"k{i}", status=200 + i) for i in range(10)])
    store.add([_row(NOW - 30, None, route="window", client="EdgeDesk")])
    newest = store.recent(4, skip_route="window")
    assert [r.key_name for r in newest] == ["k0", "k1", "k2", "k3"]
    assert [r.status for r in newest] == [200, 201, 202, 203]
    assert newest[0].prompt_tokens == 10 and newest[0].total_ms == 100.0
    # Rows the live list already shows (finished from ``before`` on) are left out.
    assert [r.key_name for r in store.recent(2, before=NOW - 150)] == ["k3", "k4"]
    # Only the route asked for is skipped.
    assert [r.route for r in store.recent(3)][1] == "window"
    # A backwards walk of the time index: no sort of the whole table, however big.
    plan = " ".join(
        str(row[-1])
        for row in store.database.query(f"EXPLAIN QUERY PLAN {RECENT_SQL}", (NOW, "window", 200))
    )
    assert "usage_requests_by_time" in plan and "TEMP B-TREE" not in plan


def test_recorder_writes_batches_off_the_calling_thread(store: UsageStore) -> None:
    recorder = UsageRecorder(store)
    heard: list[int] = []
    writer: list[str] = []

    def listen(batch: list[UsageRow]) -> None:
        heard.append(len(batch))
        writer.append(threading.current_thread().name)

    recorder.subscribe(listen)
    for i in range(1000):
        recorder.record(_row(NOW - i))
    assert recorder.flush()
    assert store.count()[0] == 1000
    assert sum(heard) == 1000 and len(heard) < 1000  # batched, not a commit a row
    assert set(writer) == {"edgedesk-usage"}
    recorder.close()
    recorder.record(_row(NOW))  # after close: dropped, never raises
    assert store.count()[0] == 1000


@pytest.mark.parametrize(
    ("agent", "client"),
    [
        ("codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)", "Codex"),
        ("claude-cli/2.1.332 (external, sdk-cli)", "Claude Code"),
        ("opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14", "opencode"),
        ("ls/JS 5.23.2", "Continue"),
        ("curl/8.5.0", "curl"),
        ("OpenAI/Python 2.20.0", "openai-python"),
        ("Anthropic/Python 0.70.0", "anthropic-python"),
        ("ollama-python/0.4.7 (x86_64 linux) Python/3.12.3", "ollama"),
        ("", "unknown"),
        (None, "unknown"),
        ("MyTool/1.0 (secret stuff)", "MyTool"),
        ("\x00\x01/", "other"),
    ],
)
def test_client_is_named_from_the_user_agent(agent: str | None, client: str) -> None:
    assert client_of(agent) == client
