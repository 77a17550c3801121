"""A mixture-of-experts model in a worker process keeps its expert placement: the plan
carries it across the pipe, and the scheduler's fresh worker after a crash loads with
the same placement (a real worker, a real SIGKILL, the tiny MoE GGUF)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from desktop.base.errors import EngineCrashed
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, GenerationParams, LocalPlan, Message, ModelSpec
from desktop.engine._worker.client import WorkerEngine
from desktop.engine._worker.start import start_worker
from tests.fixtures.tiny_moe import write_tiny_moe

LONG = GenerationParams(max_tokens=4000, temperature=0.8, seed=1)


def test_a_fresh_worker_after_a_crash_keeps_the_experts_in_ram(tmp_path: Path) -> None:
    model = write_tiny_moe(tmp_path / "tiny-moe.gguf")
    specs: list[ModelSpec] = []
    workers: list[WorkerEngine] = []

    def resolve(ref: str, **_: object) -> ModelSpec:
        return ModelSpec(model, ref, context_length=2048, plan=LocalPlan(parallel=1, n_cpu_moe=2))

    def load(spec: ModelSpec) -> WorkerEngine:
        specs.append(spec)
        workers.append(start_worker(spec, log_path=tmp_path / f"w{len(workers)}.log"))
        return workers[-1]

    scheduler = Scheduler(load, resolve)
    try:
        stream = scheduler.stream_completion("moe", "once upon", LONG)
        next(stream)
        assert workers[0].report.n_cpu_moe == 2  # what the worker loaded with
        os.kill(workers[0].pid, signal.SIGKILL)
        with pytest.raises(EngineCrashed):
            list(stream)
        call = ChatCall.of([Message("user", "hi")], GenerationParams(max_tokens=4))
        answer = list(scheduler.stream_chat("moe", call))
        assert answer[-1].is_final
        assert len(workers) == 2 and workers[1].pid != workers[0].pid
        assert [s.local.n_cpu_moe for s in specs if s.local] == [2, 2]
        assert workers[1].report.n_cpu_moe == 2
    finally:
        scheduler.close()
