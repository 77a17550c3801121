"""A model in its own worker process: it answers as the engine does, and when it dies
(killed, aborted by llama.cpp) its requests end with an error while this process lives.

Real worker processes, real llama.cpp, the suite's tiny GGUFs; the crashes are real
signals and a real ``GGML_ASSERT`` from a file llama.cpp accepts and then aborts on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from desktop.base.errors import ContextOverflow, EngineCrashed, ModelBroken, ModelLoadError
from desktop.engine._broken import BrokenFile
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import CRASHES_TO_BROKEN, Scheduler
from desktop.engine._types import ChatCall, EngineStats, GenerationParams, Message, ModelSpec
from desktop.engine._worker.client import WorkerEngine
from desktop.engine._worker.start import start_worker
from tests.conftest import wait_until
from tests.fixtures.tiny_gguf import write_tiny_llama
from tests.near_tie import assert_same_answer, steps

HI = [Message("user", "hello there")]
LONG = GenerationParams(max_tokens=4000, temperature=0.8, seed=1)


def _spec(path: Path, model_id: str = "tiny", **kw: object) -> ModelSpec:
    return ModelSpec(path, model_id, context_length=kw.pop("context_length", 512), **kw)  # type: ignore[arg-type]


@pytest.fixture
def worker(tiny_chat: Path, tmp_path: Path) -> Iterator[WorkerEngine]:
    engine = start_worker(_spec(tiny_chat), log_path=tmp_path / "logs" / "tiny.log")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def aborting_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file llama.cpp loads and then aborts on: 4 query heads over 3 KV heads."""
    return write_tiny_llama(tmp_path_factory.mktemp("bad") / "aborts.gguf", n_head_kv=3)


def test_a_worker_answers_like_the_engine_in_this_process(
    worker: WorkerEngine, tiny_chat: Path
) -> None:
    local = load_engine(_spec(tiny_chat))
    try:
        params = GenerationParams(max_tokens=12, temperature=0, logprobs=2)
        chunks = list(worker.stream_chat(ChatCall.of(HI, params)))
        here = list(local.stream_chat(ChatCall.of(HI, params)))
        # Another process: the same answer up to llama.cpp's rounding (docs/testing.md).
        assert_same_answer(
            steps(lp for c in here for lp in c.logprobs),
            steps(lp for c in chunks for lp in c.logprobs),
            "the worker's answer against this process's",
        )
        assert chunks[-1].usage.prompt_tokens == here[-1].usage.prompt_tokens  # type: ignore[union-attr]
        assert worker.tokenize("hello world") == local.tokenize("hello world")
        assert worker.render(ChatCall.of(HI)) == local.render(ChatCall.of(HI))
        counted = worker.count_chat_tokens(ChatCall.of(HI))
        assert counted == local.count_chat_tokens(ChatCall.of(HI)) == here[-1].usage.prompt_tokens  # type: ignore[union-attr]
        ids = local.tokenize("hello", add_bos=False)
        assert worker.detokenize(ids) == local.detokenize(ids)
        assert worker.stats().prompt_tokens_processed == chunks[-1].usage.prompt_tokens  # type: ignore[union-attr]
    finally:
        local.close()


def test_a_refusal_keeps_its_class_and_numbers_across_the_pipe(worker: WorkerEngine) -> None:
    with pytest.raises(ContextOverflow) as refused:
        list(worker.stream_completion("hello " * 400, GenerationParams(max_tokens=8)))
    assert refused.value.n_ctx == 512
    assert refused.value.prompt_tokens > 512
    assert list(worker.stream_chat(ChatCall.of(HI, GenerationParams(max_tokens=4))))[
        -1
    ].is_final  # lives


def test_cancel_stops_a_stream_in_the_worker(worker: WorkerEngine) -> None:
    cancel = threading.Event()
    chunks = []
    for chunk in worker.stream_completion("once upon", LONG, cancel):
        chunks.append(chunk)
        if len(chunks) == 3:
            cancel.set()
    seen = len(chunks)
    assert chunks[-1].finish_reason == "cancelled"
    assert seen < 50
    assert wait_until(lambda: worker.stats().slots_busy == 0, what="the slot freed")


def test_a_stream_closed_early_frees_its_slot_in_the_worker(worker: WorkerEngine) -> None:
    stream = worker.stream_completion("once upon", LONG)
    next(stream)
    next(stream)
    stream.close()  # type: ignore[attr-defined]

    # The close reaches the worker as a Cancel message, which its loop reads between
    # steps: the slot frees soon after, not within the close (a loaded machine shows it).
    def freed() -> EngineStats | None:
        stats = worker.stats()
        return stats if stats.slots_busy == 0 else None

    # Stopped, not run to the end of its 512-token context (which would free it too).
    assert wait_until(freed, what="the slot freed").tokens_decoded < 256


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGABRT])
def test_a_worker_that_dies_ends_every_open_request_with_the_crash(
    tiny_chat: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    # The whole trained context (2,048): both answers take seconds, so the kill lands
    # mid-answer even when this process is slow to send it. At the fixture's 512 they end
    # in about a second, and on a loaded machine they had ended before the kill (the
    # answer then is whole and right, and no crash is there to see).
    worker = start_worker(
        _spec(tiny_chat, context_length=2048), log_path=tmp_path / "logs" / "tiny.log"
    )
    streams = [worker.stream_completion("once upon", LONG) for _ in range(2)]
    for stream in streams:
        next(stream)  # both running in the worker
    os.kill(worker.pid, sig)
    for stream in streams:
        with pytest.raises(EngineCrashed) as crashed:
            for _ in stream:
                pass
        assert sig.name in crashed.value.how
        assert "stopped unexpectedly" in crashed.value.message
    assert not worker.alive
    with pytest.raises(EngineCrashed):  # a new call on the dead worker says so at once
        worker.tokenize("hello")
    worker.close()


def test_an_abort_on_load_is_refused_with_llama_cpps_reason(
    aborting_gguf: Path, tmp_path: Path
) -> None:
    with pytest.raises(EngineCrashed) as crashed:
        start_worker(_spec(aborting_gguf, "aborts"), log_path=tmp_path / "aborts.log")
    error = crashed.value
    assert error.on_load
    assert "SIGABRT" in error.how
    assert "GGML_ASSERT" in error.why and "ggml_can_mul_mat" in error.why
    assert error.why.startswith("ggml.c:")  # not the folder llama.cpp was built in
    assert "GGML_ASSERT" in error.message  # the one line the API and the CLI show


def test_the_scheduler_starts_a_fresh_worker_after_a_crash(tiny_chat: Path, tmp_path: Path) -> None:
    workers: list[WorkerEngine] = []

    def load(spec: ModelSpec) -> WorkerEngine:
        workers.append(start_worker(spec, log_path=tmp_path / f"w{len(workers)}.log"))
        return workers[-1]

    scheduler = Scheduler(load, lambda ref, **_: _spec(tiny_chat, ref))
    try:
        stream = scheduler.stream_completion("tiny", "once upon", LONG)
        next(stream)
        os.kill(workers[0].pid, signal.SIGKILL)
        with pytest.raises(EngineCrashed):
            list(stream)
        answer = list(
            scheduler.stream_chat("tiny", ChatCall.of(HI, GenerationParams(max_tokens=4)))
        )
        assert answer[-1].is_final
        assert len(workers) == 2 and workers[1].alive and workers[1].pid != workers[0].pid
        assert [m.model_id for m in scheduler.loaded()] == ["tiny"]
    finally:
        scheduler.close()
    assert (
        not psutil.pid_exists(workers[1].pid) or psutil.Process(workers[1].pid).status() == "zombie"
    )


def test_a_model_that_crashes_on_every_load_is_marked_broken_until_retried(
    aborting_gguf: Path, tmp_path: Path
) -> None:
    broken = BrokenFile(tmp_path / "broken-models.json")
    starts: list[int] = []

    def load(spec: ModelSpec) -> WorkerEngine:
        starts.append(1)
        return start_worker(spec, log_path=tmp_path / "aborts.log")

    scheduler = Scheduler(load, lambda ref, **_: _spec(aborting_gguf, ref), broken=broken)
    for _ in range(CRASHES_TO_BROKEN):
        with pytest.raises(EngineCrashed):
            scheduler.load("aborts")
    with pytest.raises(ModelBroken) as refused:
        scheduler.load("aborts")
    assert len(starts) == CRASHES_TO_BROKEN  # not started a fourth time
    assert "GGML_ASSERT" in refused.value.message
    assert "models retry aborts" in refused.value.message
    assert "GGML_ASSERT" in (
        BrokenFile(broken.path).reason("aborts") or ""
    )  # other processes see it
    assert scheduler.retry("aborts")
    with pytest.raises(EngineCrashed):  # tried again
        scheduler.load("aborts")
    assert len(starts) == CRASHES_TO_BROKEN + 1


def test_a_load_refusal_is_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelLoadError) as refused:
        start_worker(_spec(bad, "bad"), log_path=tmp_path / "bad.log")
    assert not isinstance(refused.value, EngineCrashed)
    assert "not-a-model.gguf" in refused.value.message


def test_a_worker_leaves_when_the_app_dies(tiny_chat: Path, tmp_path: Path) -> None:
    """kill -9 of the app leaves no worker holding the model's memory."""
    script = (
        "import sys, os\n"
        "from pathlib import Path\n"
        "from desktop.engine._types import ModelSpec\n"
        "from desktop.engine._worker.start import start_worker\n"
        f"e = start_worker(ModelSpec(Path({str(tiny_chat)!r}), 't', context_length=512),"
        f" log_path=Path({str(tmp_path / 'w.log')!r}))\n"
        "print(e.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    app = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert app.stdout is not None
    pid = int(app.stdout.readline())
    assert psutil.pid_exists(pid)
    app.kill()
    app.wait()
    worker = psutil.Process(pid)
    worker.wait(timeout=30)  # returns once the worker has exited
    assert not worker.is_running()
    app.stdin.close()  # type: ignore[union-attr]
    app.stdout.close()


def test_embeddings_from_a_worker_match_this_process(tiny_embed: Path, tmp_path: Path) -> None:
    spec = _spec(tiny_embed, "embed", kind="embedding")
    worker = start_worker(spec, log_path=tmp_path / "e.log")
    local = load_engine(spec)
    try:
        texts: list[str | list[int]] = ["hello world", "a second text", [2, 5, 7]]
        far, near = worker.embed(texts), local.embed(texts)  # token ids cross the pipe
        assert len(far) == 3
        for a, b in zip(far, near, strict=True):
            assert a == pytest.approx(b, abs=1e-6)
    finally:
        worker.close()
        local.close()


def test_the_apps_own_entry_point_runs_a_worker_as_a_frozen_app_does(
    tiny_chat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frozen app has no ``-m``: it starts itself with ``--engine-worker``."""
    from desktop.engine._worker.start import worker_command

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert worker_command() == [sys.executable, "--engine-worker"]
    monkeypatch.delattr(sys, "frozen")
    # The same entry, reached as the frozen executable reaches it: desktop/__main__.py.
    engine = start_worker(
        _spec(tiny_chat),
        log_path=tmp_path / "frozen.log",
        command=[sys.executable, "-m", "desktop", "--engine-worker"],
    )
    try:
        assert list(engine.stream_chat(ChatCall.of(HI, GenerationParams(max_tokens=3))))[
            -1
        ].is_final
    finally:
        engine.close()


def test_a_call_waiting_for_a_busy_model_leaves_the_line_when_cancelled(
    tiny_chat: Path, tmp_path: Path
) -> None:
    """``count_tokens``, embeddings or a rerank whose client left while it waited."""
    from desktop.base.errors import Cancelled
    from desktop.engine._types import LocalPlan

    spec = _spec(tiny_chat, plan=LocalPlan(parallel=1))
    scheduler = Scheduler(
        lambda s: start_worker(s, log_path=tmp_path / "one.log"), lambda ref, **_: spec
    )
    try:
        stream = scheduler.stream_completion("tiny", "once upon", LONG)
        next(stream)  # the one slot is taken
        cancel = threading.Event()
        outcome: list[BaseException] = []

        def count() -> None:
            try:
                scheduler.with_engine("tiny", lambda e: e.tokenize("hello"), cancel)
            except BaseException as exc:
                outcome.append(exc)

        waiting = threading.Thread(target=count)
        waiting.start()
        assert scheduler.wait_until(lambda: scheduler.queue_depth == 1, 30)
        cancel.set()
        waiting.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)
        assert scheduler.queue_depth == 0
        stream.close()  # type: ignore[attr-defined]
    finally:
        scheduler.close()


def test_a_call_the_worker_cannot_read_is_refused_and_the_model_lives(
    worker: WorkerEngine,
) -> None:
    from desktop.base.errors import InvalidRequest

    with pytest.raises(InvalidRequest, match="not a worker message"):
        worker.render(HI)  # type: ignore[arg-type]  # a list, not a ChatCall
    assert worker.alive
    assert worker.tokenize("hello") == worker.tokenize("hello")
