"""Usage recording: ``stats`` over a million rows, and what recording costs a request.

Run: .venv/bin/python -m tests.benchmarks.bench_usage [--rows 1000000] [--requests 300]

Two parts, each in one run:

- **stats**: a database (plaintext, then encrypted with SQLCipher as a default install
  is) filled with ``--rows`` usage rows spread over 30 days: 8 keys, each one tool (its
  client) using two of 5 models, as "one key per client" has it; 3 % errors; written
  through ``UsageStore.add`` in batches as the recorder writes them; then ``UsageStore.summary`` (what ``edgedesk stats`` prints) by key, model,
  client and day over 30 days and 24 hours, and ``series`` (what the Usage tab draws),
  each the median of 5 runs. Target: under 1 s over the million rows.
- **overhead**: one context, two real servers over the tiny test model on 127.0.0.1, one
  recording usage and one not (``services.usage = None``); the real ``openai`` client
  sends ``--requests`` requests to each, interleaved in rounds (the servers swap roles
  half-way, so a difference between the two servers themselves cancels out) (``GET /v1/models``, the
  cheapest request, where a cost would show most, and a 1-token chat completion), and
  the median and p90 latencies are compared side by side. Also the cost of one
  ``UsageRecorder.record`` call on the caller's thread.

Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import openai

from desktop.store._cipher import DatabaseKey
from desktop.store._db import open_database
from desktop.store._usage import UsageRow, UsageStore
from desktop.store._usage_recorder import UsageRecorder

DAY = 86_400.0


def _median_s(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _rows(n: int, now: float) -> list[UsageRow]:
    rng = random.Random(7)
    keys = [f"team-{i}" for i in range(8)]
    models = ["glm-4-9b", "kimi-k2", "bge-m3", "gpu/qwen3", "gemma-3-270m"]
    clients = ["Codex", "Claude Code", "opencode", "Continue", "curl", "openai-python"]
    out = []
    for _ in range(n):
        total = rng.lognormvariate(7.0, 0.8)
        failed = rng.random() < 0.03
        k = rng.randrange(len(keys))
        out.append(
            UsageRow(
                time=now - rng.random() * 30 * DAY,
                key_name=keys[k],
                client=clients[k % len(clients)],
                model=models[(k + rng.randrange(2)) % len(models)],
                route="/v1/chat/completions",
                status=500 if failed else 200,
                error_code="engine_failed" if failed else None,
                prompt_tokens=rng.randint(50, 4000),
                cached_tokens=rng.randint(0, 2000),
                completion_tokens=0 if failed else rng.randint(1, 800),
                ttft_ms=total * rng.uniform(0.05, 0.4),
                total_ms=total,
            )
        )
    # In time order, as requests finish and the recorder writes them.
    return sorted(out, key=lambda r: r.time)


def bench_stats(rows: int, folder: Path) -> None:
    now = time.time()
    data = _rows(rows, now)
    for label, key in (
        ("plaintext", None),
        ("encrypted", DatabaseKey(os.urandom(32).hex(), source="bench")),
    ):
        db = open_database(folder / f"usage-{label}.db", key=key)
        store = UsageStore(db)
        started = time.perf_counter()
        for i in range(0, len(data), 10_000):
            store.add(data[i : i + 10_000])
        print(f"[{label}] wrote {rows:,} rows in {time.perf_counter() - started:.1f} s")
        for by in ("key", "model", "client", "day"):
            for span, name in ((30 * DAY, "30d"), (DAY, "24h")):
                took = _median_s(lambda by=by, span=span: store.summary(now - span, by=by))
                print(f"[{label}] stats --since {name} --by {by:<6} {took * 1000:7.0f} ms")
        took = _median_s(lambda: store.series(now - 30 * DAY, DAY, by="model"))
        print(f"[{label}] series 30d by day, by model       {took * 1000:7.0f} ms")
        took = _median_s(lambda: store.series(now - DAY, 3600, by="key"))
        print(f"[{label}] series 24h by hour, by key        {took * 1000:7.0f} ms")
        started = time.perf_counter()
        rolled = store.roll_up(now)
        print(
            f"[{label}] roll-up of {rolled:,} rows older than 7 days: "
            f"{time.perf_counter() - started:.1f} s"
        )
        took = _median_s(lambda: store.summary(now - 30 * DAY, by="key"))
        print(f"[{label}] stats --since 30d --by key after roll-up {took * 1000:5.0f} ms")
        db.close()


def _lat(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def bench_overhead(requests: int, folder: Path) -> None:
    from desktop.base.config import ServerSettings
    from desktop.policy._sources import MachinePolicy
    from desktop.root.context import build_context
    from tests.fixtures.tiny_gguf import write_tiny_llama

    os.environ["EDGEDESK_HOME"] = str(folder / "home")
    model = folder / "tiny-chat.gguf"
    write_tiny_llama(model)
    ctx = build_context(policy=MachinePolicy())
    settings = ServerSettings(require_key=False).model_copy(update={"port": 0})
    on = ctx.new_api_server(settings=settings, model_paths=[model])
    off = ctx.new_api_server(settings=settings)
    off.services.usage = None
    assert on.services.usage is not None
    on.start()
    off.start()
    try:
        clients = {
            name: openai.OpenAI(base_url=r.url, api_key="x", max_retries=0, timeout=60)
            for name, r in (("on", on), ("off", off))
        }
        chat = next(m.id for m in clients["on"].models.list().data)

        def ask(c: openai.OpenAI) -> None:
            c.chat.completions.create(
                model=chat,
                messages=[{"role": "user", "content": "hi"}],
                max_tokens=1,
                temperature=0,
            )

        for c in clients.values():  # warm: the model loaded, connections open
            for _ in range(5):
                ask(c)
        results: dict[tuple[str, str], list[float]] = {}
        sink = on.services.usage
        rounds = requests // 10
        for _round in range(rounds):
            if _round == rounds // 2:
                # Half-way the two servers swap roles, so that a difference between the
                # servers themselves (not the recording) cancels out.
                on.services.usage, off.services.usage = None, sink
                clients = {"on": clients["off"], "off": clients["on"]}
            for name in ("on", "off") if _round % 2 == 0 else ("off", "on"):
                c = clients[name]
                for _ in range(5):
                    results.setdefault(("models", name), []).append(_lat(c.models.list))
                    results.setdefault(("chat", name), []).append(_lat(lambda c=c: ask(c)))
        for c in clients.values():
            c.close()
        assert ctx.usage_recorder.flush()
        recorded = ctx.usage_store.count()[0]
        print(f"recorded {recorded} rows (server with recording: every request it answered)")
        for kind in ("models", "chat"):
            for name in ("off", "on"):
                xs = sorted(results[(kind, name)])
                print(
                    f"{kind:<6} recording {name:<3}  n={len(xs)}  median "
                    f"{statistics.median(xs):6.2f} ms  p90 {xs[int(len(xs) * 0.9)]:6.2f} ms"
                )
    finally:
        on.stop()
        off.stop()
        ctx.close()
    # The caller's side alone: what a request pays (a queue put).
    db = open_database(folder / "micro.db")
    recorder = UsageRecorder(UsageStore(db))
    row = _rows(1, time.time())[0]
    n = 100_000
    started = time.perf_counter()
    for _ in range(n):
        recorder.record(row)
    per = (time.perf_counter() - started) / n * 1e6
    recorder.flush(60)
    recorder.close()
    db.close()
    print(f"UsageRecorder.record: {per:.2f} µs a call on the request's thread")


def main() -> None:
    """Run both parts and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--skip-stats", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_stats:
            bench_stats(args.rows, Path(tmp))
        if not args.skip_overhead:
            bench_overhead(args.requests, Path(tmp))


if __name__ == "__main__":
    main()
