"""`edgedesk bench` shows slots busy/total, queue length, prompt cache and batching."""

from __future__ import annotations

import threading
from pathlib import Path

from desktop.cli.bench import format_report
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, EngineStats, GenerationParams, Message, ModelSpec
from desktop.machine._bench import BenchReport, slot_figures
from tests.engine.test_scheduler import WAIT_S, FakeEngine

STATS = EngineStats(
    slots_total=2,
    prompt_tokens_processed=900,
    prompt_tokens_cached=2700,
    decode_steps=40,
    tokens_decoded=100,
)


class _Counted(FakeEngine):
    def stats(self) -> EngineStats:
        return STATS


def test_figures_keep_the_peaks_of_a_run_that_has_ended() -> None:
    gate = threading.Event()
    scheduler = Scheduler(
        lambda s: _Counted(s, gate, parallel=2), lambda ref: ModelSpec(Path(f"/{ref}.gguf"), ref)
    )
    streams = [
        scheduler.stream_chat("m", ChatCall.of([Message("user", n)], GenerationParams()))
        for n in "ab"
    ]
    for stream in streams:
        next(stream)
    waiter = threading.Thread(
        target=lambda: list(
            scheduler.stream_chat("m", ChatCall.of([Message("user", "c")], GenerationParams()))
        ),
        daemon=True,
    )
    waiter.start()
    assert scheduler.wait_until(lambda: scheduler.queue_depth == 1, WAIT_S)
    gate.set()
    for stream in streams:
        list(stream)
    waiter.join(WAIT_S)
    figures = slot_figures(scheduler, "m")  # read after every request finished
    assert (figures["peak_slots_busy"], figures["slots_total"]) == (2, 2)
    assert figures["peak_queue_length"] == 1
    assert (figures["prompt_tokens_cached"], figures["prompt_tokens_processed"]) == (2700, 900)
    assert figures["tokens_per_decode_step"] == 2.5


def test_report_prints_the_slot_figures() -> None:
    report = BenchReport(
        "m",
        "/m.gguf",
        "2 CPUs",
        "cpu",
        8192,
        0,
        engine={
            "peak_slots_busy": 3,
            "slots_total": 4,
            "peak_queue_length": 2,
            "prompt_tokens_cached": 2700,
            "prompt_tokens_processed": 900,
            "decode_steps": 40,
            "tokens_per_decode_step": 2.5,
        },
    )
    text = format_report(report)
    assert "slots busy (peak) / total" in text and "3 / 4" in text
    assert "queue length (peak)" in text
    assert "2700 / 900" in text and "2.50" in text
