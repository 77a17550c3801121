"""The window keeps processing events while a long answer streams, and closes cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from desktop.ui.main_window import MainWindow

pytestmark = pytest.mark.qt

MAX_GAP_S = 0.050
# A single late tick can come from the OS scheduler on a busy 2-core runner (seen: one
# 100 ms gap while three other test suites ran beside this one). Blocking work on the UI
# thread shows up as a run of late ticks and long stalls, which fail both bounds below.
FREEZE_S = 0.250


def test_event_loop_never_stalls_during_a_long_generation(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.current.max_tokens = 800
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    chat.input.setPlainText("write a very long essay")
    with qtbot.waitSignal(chat.generation_finished, timeout=60_000) as finished:
        chat.send()
        last[0] = time.perf_counter()
        timer.start(5)
    timer.stop()
    turn = finished.args[0]
    assert turn.usage.completion_tokens == 800
    worst = max(gaps)
    p99 = sorted(gaps)[int(len(gaps) * 0.99)]
    sys.stderr.write(f"UI event-loop gaps over {len(gaps)} ticks while generating 800 tokens: "
                     f"max {worst * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms\n")
    assert len(gaps) > 20
    assert p99 < MAX_GAP_S, f"1% of event-loop gaps exceeded {p99 * 1000:.0f} ms"
    assert worst < FREEZE_S, f"the event loop froze for {worst * 1000:.0f} ms"


def test_closing_during_generation_stops_everything(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.current.max_tokens = 1900
    chat.input.setPlainText("long")
    chat.send()
    qtbot.waitUntil(lambda: bool(chat.current.turns[-1].content), timeout=20_000)
    started = time.perf_counter()
    window.close()
    assert time.perf_counter() - started < 3.0
    assert window.pool.active == 0
    assert window.context.scheduler.loaded() == []


def test_sigterm_closes_the_app_cleanly(edgedesk_home: Path) -> None:
    env = {**os.environ, "EDGEDESK_HOME": str(edgedesk_home), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-m", "desktop"], env=env, text=True,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "window open" in line:
                sys.stderr.write(line)
                break
        else:
            pytest.fail(f"the window never opened (exit {proc.wait()})")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
