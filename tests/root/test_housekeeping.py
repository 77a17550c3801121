"""The app's one housekeeping: keep-alive unloads and maintenance, on a fake clock."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from desktop.upkeep import Housekeeping
from tests.conftest import wait_until
from tests.fixtures.children import free_port

HOUSEKEEPING = "edgedesk-housekeeping"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == HOUSEKEEPING]


def test_idle_models_are_reaped_each_interval_and_maintenance_comes_soon_then_hourly() -> None:
    clock, done = Clock(), []
    keeper = Housekeeping(
        lambda: done.append("reap") or ["m"],
        lambda cancel: done.append("maintain"),
        reap_interval_s=30,
        maintain_first_s=10,
        maintain_interval_s=3600,
        clock=clock,
    )
    assert keeper.tick() == [] and done == []  # nothing due at start
    clock.now += 10
    keeper.tick()
    assert done == ["maintain"]  # the rescan on start, before the first reap
    clock.now += 20
    assert keeper.tick() == ["m"] and done == ["maintain", "reap"]
    clock.now += 30
    keeper.tick()
    assert done == ["maintain", "reap", "reap"]  # hourly, not every tick
    clock.now += 3600
    keeper.tick()
    assert done[-2:] == ["maintain", "reap"]


def test_a_failing_pass_is_logged_and_the_next_one_still_comes() -> None:
    clock, reaped = Clock(), []

    def maintain(cancel: threading.Event) -> None:
        raise RuntimeError("a locked file")

    def reap() -> list[str]:
        reaped.append(clock.now)
        if len(reaped) == 1:
            raise RuntimeError("unload failed")
        return []

    keeper = Housekeeping(reap, maintain, reap_interval_s=30, maintain_first_s=0, clock=clock)
    clock.now += 30
    assert keeper.tick() == []  # maintenance raised, reaping still ran (and raised)
    clock.now += 30
    keeper.tick()
    assert len(reaped) == 2


def test_the_thread_runs_passes_until_stopped_and_stop_cancels_maintenance() -> None:
    reaped, maintaining = threading.Event(), threading.Event()
    cancelled: list[bool] = []

    def maintain(cancel: threading.Event) -> None:
        maintaining.set()
        cancelled.append(cancel.wait(30))  # a long rescan, cut short by stop()

    keeper = Housekeeping(
        lambda: reaped.set() or [], maintain, reap_interval_s=0, maintain_first_s=0
    )
    keeper.start()
    try:
        assert maintaining.wait(10)
        keeper.start()  # a second start is a no-op: still one thread
        assert len(_threads()) == 1
    finally:
        keeper.stop()
    assert cancelled == [True]
    assert not keeper.running and not _threads()
    keeper.start()  # it can be started again (a window reopened over one context)
    assert reaped.wait(10)
    keeper.stop()
    assert not _threads()


def test_the_server_runner_leaves_housekeeping_to_the_context(tmp_path: Path) -> None:
    # The window and `edgedesk serve` start ctx.housekeeping; the runner has no timer of
    # its own, so a window serving the API does not reap or rescan twice.
    ctx = build_context(
        environ={"EDGEDESK_HOME": str(tmp_path)},
        cli_settings={"server.port": free_port(), "server.require_key": False},
    )
    try:
        ctx.api_server.start()
        assert ctx.api_server.running and not _threads()
        ctx.housekeeping.start()
        assert len(_threads()) == 1
    finally:
        ctx.close()
    assert not _threads()  # closing the context stops it


def test_edgedesk_serve_keeps_collections_fresh_on_its_own(
    tmp_path: Path, tiny_embed: Path
) -> None:
    # Headless, nothing else rescans: a file deleted while the server runs leaves the
    # index at the first maintenance pass (10 s after start), with no user action.
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "keep.md").write_text("hello world\n\nthe cat is a dog\n")
    (folder / "gone.md").write_text("model chat desk edge\n")
    ctx = build_context(policy=NoPolicy(), cli_settings={"embedding_model": str(tiny_embed)})
    try:
        ctx.library.add("notes", [folder])
    finally:
        ctx.close()
        assert ctx.data_lock is not None
        ctx.data_lock.release()
    (folder / "gone.md").unlink()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [sys.executable, "-m", "desktop", "serve", "--no-auth", "--port", str(free_port())],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
        )
        try:
            watcher = build_context(policy=NoPolicy())
            try:

                def dropped() -> bool:  # another process's work gives no other signal
                    assert serve.poll() is None, log.read_text()
                    return watcher.library.collections()[0].documents == 1

                wait_until(dropped, 120, "serve drops the deleted file")
            finally:
                watcher.close()
        finally:
            serve.terminate()
            serve.wait(30)


def test_the_hourly_maintenance_rolls_up_and_prunes_by_usage_retention_days() -> None:
    import time as clock

    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context
    from desktop.store._usage import UsageRow

    day = 86_400.0

    def row(when: float) -> UsageRow:
        return UsageRow(when, "ide", "curl", "tiny", "/v1/chat/completions", 200, total_ms=9.0)

    ctx = build_context(policy=NoPolicy(), cli_settings={"usage_retention_days": 30})
    now = clock.time()
    ctx.usage_store.add([row(now - 60), row(now - 8 * day), row(now - 40 * day)])
    report = ctx.maintenance()
    assert (report.usage_pruned, report.usage_rolled_up) == (2, 1)  # a row and its hour
    assert [r.time for r in ctx.usage_store.rows()] == [now - 60]
    assert ctx.usage_store.summary(now - 31 * day)[0].requests == 2  # the 8-day-old hour
    ctx.close()
