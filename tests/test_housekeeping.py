"""The app's one housekeeping: keep-alive unloads and maintenance, on a fake clock."""

from __future__ import annotations

import threading
from pathlib import Path

from desktop.app import build_context
from desktop.housekeeping import Housekeeping
from tests.server.conftest import free_port

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
    keeper = Housekeeping(lambda: done.append("reap") or ["m"],
                          lambda cancel: done.append("maintain"),
                          reap_interval_s=30, maintain_first_s=10, maintain_interval_s=3600,
                          clock=clock)
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

    keeper = Housekeeping(reap, maintain, reap_interval_s=30, maintain_first_s=0,
                          clock=clock)
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

    keeper = Housekeeping(lambda: reaped.set() or [], maintain,
                          reap_interval_s=0, maintain_first_s=0)
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
    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path)},
                        cli_settings={"server.port": free_port(), "server.require_key": False})
    try:
        ctx.server.start()
        assert ctx.server.running and not _threads()
        ctx.housekeeping.start()
        assert len(_threads()) == 1
    finally:
        ctx.close()
    assert not _threads()  # closing the context stops it
