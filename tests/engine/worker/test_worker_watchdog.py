"""The watchdog: a worker that stops answering is killed, its requests end with an error
at once, and the next request gets a fresh worker; a frame header claiming 1 GiB ends a
worker instead of hanging it.

Real worker processes with the suite's tiny GGUFs, stopped with a real SIGSTOP (what a
driver hang, a deadlock or paging without end look like from outside). A worker whose
decode thread is stuck while its reading thread answers pings, which llama.cpp cannot be
made to do on cue, is ``tests/engine/stuck_worker.py`` speaking the real wire protocol.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from desktop.base.errors import EngineCrashed
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, GenerationParams, Message, ModelSpec
from desktop.engine._worker.client import WorkerEngine
from desktop.engine._worker.start import start_worker
from tests.conftest import scaled, wait_until

HI = [Message("user", "hello there")]
LONG = GenerationParams(max_tokens=4000, temperature=0.8, seed=1)
# The watchdog's heartbeat deadline in these tests (15 s in the app), longer on a slow
# machine: there a worker that is only slow must not be taken for a stopped one.
HUNG_AFTER_S = scaled(1.5)
BOUND_S = 60.0  # far above any deadline here: a worker nobody watches hangs for ever
pytestmark = pytest.mark.skipif(os.name == "nt", reason="SIGSTOP is POSIX")


def _spec(path: Path, model_id: str = "tiny", **kw: Any) -> ModelSpec:
    return ModelSpec(path, model_id, context_length=kw.pop("context_length", 2048), **kw)


def _ending(work: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``work`` on a thread; what it raised lands in the list."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, raised


def _stopped(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_STOPPED
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def watched(tiny_chat: Path, tmp_path: Path) -> Iterator[WorkerEngine]:
    worker = start_worker(
        _spec(tiny_chat), log_path=tmp_path / "logs" / "tiny.log", hung_after_s=HUNG_AFTER_S
    )
    yield worker
    if worker.alive:
        os.kill(worker.pid, signal.SIGKILL)  # never leave a stopped process behind
    worker.close()


def test_a_stopped_worker_is_killed_and_its_requests_end_with_an_error(
    watched: WorkerEngine,
) -> None:
    stream = watched.stream_completion("once upon", LONG)
    next(stream)
    next(stream)  # mid-answer
    left = threading.Event()  # the client of a second stream goes away while it hangs
    second = watched.stream_completion("long ago", LONG, left)
    next(second)
    os.kill(watched.pid, signal.SIGSTOP)
    wait_until(lambda: _stopped(watched.pid), BOUND_S, "the worker stopped")
    streaming, stream_raised = _ending(lambda: list(stream))
    leaving, leaving_raised = _ending(lambda: list(second))
    left.set()
    asking, ask_raised = _ending(lambda: watched.tokenize("a new request"))

    for thread in (streaming, leaving, asking):
        thread.join(BOUND_S)
        assert not thread.is_alive(), "a request still waits on the stopped worker"
    for raised in (stream_raised, leaving_raised, ask_raised):
        assert len(raised) == 1 and isinstance(raised[0], EngineCrashed), raised
    error = stream_raised[0]
    assert isinstance(error, EngineCrashed)
    assert error.code == "model_crashed"  # answered as a crash is: 500, the same events
    assert f"no answer in {HUNG_AFTER_S:g} s" in error.how
    assert "stopped responding" in error.message and "reloads at the next request" in (
        error.message
    )
    assert not watched.alive
    assert not psutil.pid_exists(watched.pid) or psutil.Process(watched.pid).status() == (
        psutil.STATUS_ZOMBIE
    )


def test_a_request_stuck_writing_to_a_stopped_worker_does_not_stop_the_watchdog(
    watched: WorkerEngine,
) -> None:
    """A megabyte to a stopped worker fills its pipe: the sending thread blocks in the
    write, holding the channel, and the watchdog still kills the worker on time."""
    os.kill(watched.pid, signal.SIGSTOP)
    wait_until(lambda: _stopped(watched.pid), BOUND_S, "the worker stopped")
    sending, raised = _ending(lambda: watched.tokenize("word " * 200_000))
    sending.join(BOUND_S)
    assert not sending.is_alive(), "the request still blocks on the stopped worker's pipe"
    assert len(raised) == 1 and isinstance(raised[0], EngineCrashed), raised
    assert f"no answer in {HUNG_AFTER_S:g} s" in raised[0].how


def test_a_quiet_worker_answers_its_heartbeat_and_lives(watched: WorkerEngine) -> None:
    answer = list(watched.stream_chat(ChatCall.of(HI, GenerationParams(max_tokens=4))))
    assert answer[-1].is_final
    # Idle for several of its deadlines: only the pings, answered, cross the pipe.
    time.sleep(3 * HUNG_AFTER_S)
    assert watched.alive
    assert watched.tokenize("hello") == watched.tokenize("hello")


def test_an_app_that_slept_does_not_take_its_workers_for_hung(
    tiny_chat: Path, tmp_path: Path
) -> None:
    """The machine sleeps (here: the app process alone is stopped, its worker runs on):
    on waking, the worker's silence meanwhile is the app's, and the worker lives."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from desktop.engine._types import ModelSpec\n"
        "from desktop.engine._worker.start import start_worker\n"
        f"e = start_worker(ModelSpec(Path({str(tiny_chat)!r}), 't', context_length=512),"
        f" log_path=Path({str(tmp_path / 'w.log')!r}), hung_after_s={HUNG_AFTER_S!r})\n"
        "print(e.pid, flush=True)\n"
        "sys.stdin.readline()\n"
        "print(e.alive, e.tokenize('hello') == e.tokenize('hello'), flush=True)\n"
        "e.close()\n"
    )
    app = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        text=True,
    )
    assert app.stdin is not None and app.stdout is not None
    try:
        app.stdout.readline()  # its worker is ready
        os.kill(app.pid, signal.SIGSTOP)
        wait_until(lambda: _stopped(app.pid), BOUND_S, "the app stopped")
        time.sleep(3 * HUNG_AFTER_S)  # asleep for three of its workers' deadlines
        os.kill(app.pid, signal.SIGCONT)
        time.sleep(HUNG_AFTER_S / 2)  # two of its watchdog's beats: it has looked by now
        app.stdin.write("go\n")
        app.stdin.flush()
        assert app.stdout.readline().split() == ["True", "True"]
    finally:
        app.kill()
        app.wait()
        app.stdin.close()
        app.stdout.close()


def test_the_scheduler_starts_a_fresh_worker_after_a_hang(tiny_chat: Path, tmp_path: Path) -> None:
    workers: list[WorkerEngine] = []

    def load(spec: ModelSpec) -> WorkerEngine:
        log = tmp_path / f"w{len(workers)}.log"
        workers.append(start_worker(spec, log_path=log, hung_after_s=HUNG_AFTER_S))
        return workers[-1]

    scheduler = Scheduler(load, lambda ref, **_: _spec(tiny_chat, ref))
    try:
        stream = scheduler.stream_completion("tiny", "once upon", LONG)
        next(stream)
        os.kill(workers[0].pid, signal.SIGSTOP)
        with pytest.raises(EngineCrashed, match="stopped responding"):
            list(stream)
        answer = list(
            scheduler.stream_chat("tiny", ChatCall.of(HI, GenerationParams(max_tokens=4)))
        )
        assert answer[-1].is_final
        assert len(workers) == 2 and workers[1].pid != workers[0].pid
    finally:
        for worker in workers:
            if worker.alive:
                os.kill(worker.pid, signal.SIGKILL)
        scheduler.close()


def _stuck(tmp_path: Path, mode: str, **deadlines: float) -> WorkerEngine:
    """A worker whose decode is stuck (``stuck_worker``) while it answers pings."""
    return start_worker(
        _spec(tmp_path / "never-read.gguf", "stuck"),
        log_path=tmp_path / "stuck.log",
        command=[sys.executable, "-m", "tests.engine.stuck_worker", mode],
        environ={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        **deadlines,  # type: ignore[arg-type]
    )


def test_a_stream_past_its_generation_timeout_is_ended_although_pings_are_answered(
    tmp_path: Path,
) -> None:
    worker = _stuck(tmp_path, "silent", grace_s=0.5, hung_after_s=BOUND_S)
    try:
        params = GenerationParams(max_tokens=8, timeout_s=0.5)
        streaming, raised = _ending(lambda: list(worker.stream_completion("hi", params)))
        streaming.join(BOUND_S)
        assert not streaming.is_alive()
        assert len(raised) == 1 and isinstance(raised[0], EngineCrashed)
        assert "stream not done after 1 s, killed" in raised[0].how
    finally:
        worker.close()


def test_a_call_past_the_call_deadline_is_ended(tmp_path: Path) -> None:
    worker = _stuck(tmp_path, "silent", call_timeout_s=0.3, grace_s=0.3, hung_after_s=BOUND_S)
    try:
        asking, raised = _ending(lambda: worker.embed(["hello"]))
        asking.join(BOUND_S)
        assert not asking.is_alive()
        assert len(raised) == 1 and isinstance(raised[0], EngineCrashed)
        assert "Embed call not done after 0.6 s" in raised[0].how
    finally:
        worker.close()


def test_a_stream_without_a_timeout_is_left_to_the_heartbeat(tmp_path: Path) -> None:
    """The window's chat has no generation timeout: a live worker is never cut short."""
    worker = _stuck(tmp_path, "silent", call_timeout_s=0.2, grace_s=0.2, hung_after_s=BOUND_S)
    try:
        cancel = threading.Event()
        streaming, raised = _ending(
            lambda: list(worker.stream_completion("hi", GenerationParams(max_tokens=8), cancel))
        )
        time.sleep(2.0)  # ten times the call deadline
        assert streaming.is_alive() and worker.alive and not raised
    finally:
        worker.close()  # ends the stream with the close's error
        streaming.join(BOUND_S)


def test_a_worker_stopped_while_it_loads_is_killed_and_the_load_fails(tmp_path: Path) -> None:
    loading, raised = _ending(lambda: _stuck(tmp_path, "stop-on-load", hung_after_s=1.0))
    loading.join(BOUND_S)
    assert not loading.is_alive(), "the load still waits on the stopped worker"
    assert len(raised) == 1 and isinstance(raised[0], EngineCrashed)
    assert raised[0].on_load  # counted toward "broken" like a crash on load
    assert "stopped responding while loading stuck" in raised[0].message
    assert "no answer in 4 s while loading" in raised[0].how  # never answered: 4 × 1 s


def test_a_frame_header_claiming_1_gib_from_the_worker_kills_it_at_once(tmp_path: Path) -> None:
    worker = _stuck(tmp_path, "bad-frame", hung_after_s=BOUND_S)
    try:
        asking, raised = _ending(lambda: worker.tokenize("hello"))
        asking.join(BOUND_S)
        assert not asking.is_alive()
        assert len(raised) == 1 and isinstance(raised[0], EngineCrashed)
        assert "no message" in raised[0].how and "1073741824 bytes" in raised[0].how
    finally:
        worker.close()


def test_a_frame_header_claiming_1_gib_ends_a_new_worker(tmp_path: Path) -> None:
    worker = subprocess.Popen(
        [sys.executable, "-m", "desktop.engine._worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, said = worker.communicate(struct.pack("<I", 1 << 30), timeout=BOUND_S)
    assert worker.returncode == 3
    assert b"claims 1073741824 bytes" in said


@pytest.mark.skipif(not Path("/proc/self/fd/0").exists(), reason="needs /proc")
def test_a_hostile_frame_header_ends_a_loaded_worker_with_a_clear_error(
    watched: WorkerEngine,
) -> None:
    """Another process of the user's writes a header claiming 1 GiB into the worker's
    input: the worker ends at once, and the next call says why, instead of a worker
    that waits for a gigabyte."""
    with open(f"/proc/{watched.pid}/fd/0", "wb", buffering=0) as pipe:
        pipe.write(struct.pack("<I", 1 << 30))
    wait_until(lambda: not watched.alive, BOUND_S, "the worker ended")
    with pytest.raises(EngineCrashed) as crashed:
        watched.tokenize("hello")
    assert crashed.value.how == "exit code 3"
    assert "claims 1073741824 bytes" in crashed.value.message
