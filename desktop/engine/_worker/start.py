"""Starting a model's worker process: its command, its log, its load and a watch on it.

``start_worker`` starts ``python -m desktop.engine._worker`` (in a frozen app, the app's
own executable with ``--engine-worker``) with its stderr in the model's log (the last
run's kept as ``.1``), sends it the load plan and waits for it to load, pinging it
meanwhile: a worker that stops answering while it loads is killed (``_LoadWatch``), one
that refuses raises the worker's own error, one that dies raises ``EngineCrashed``. The
ready worker is handed over as a ``client.WorkerEngine``. Called from any thread; it
blocks until the load ends.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from desktop.base.errors import EngineCrashed, ModelLoadError
from desktop.engine._types import ModelSpec
from desktop.engine._worker import wire
from desktop.engine._worker.client import CLOSE_TIMEOUT_S, HEARTBEAT_S, WorkerEngine
from desktop.engine._worker.endings import crash_error, error_of, log_tail, shown_tail

log = logging.getLogger("edgedesk.engine")
HUNG_AFTER_S = 15.0  # nothing from a worker this long, pings included: it is killed
DEADLINE_GRACE_S = 60.0  # past a stream's generation timeout or a call's: killed
STARTUP_FACTOR = 4  # a new worker's first word may take this many times as long (60 s)


def worker_command() -> list[str]:
    """How to start a worker with this Python (or this frozen app)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--engine-worker"]
    return [sys.executable, "-m", "desktop.engine._worker"]


def worker_log(log_dir: Path, model_id: str) -> Path:
    """The log file of ``model_id``'s worker: ``LOG_DIR/engine/<id>.log`` (a safe name)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id).strip(".")
    return log_dir / "engine" / f"{name or 'model'}.log"


class _LoadWatch:
    """While a worker loads: ping it each beat, and kill it (SIGKILL) when nothing has
    come from it for ``hung_after_s``. Its reading thread answers while the model loads
    on another, so only a worker stopped or stuck as a whole misses it; a load that just
    takes long (a big file, a slow disk) has no deadline. Until its first answer (a new
    interpreter starting, its imports on a busy or emulated machine) it has
    ``STARTUP_FACTOR`` times as long."""

    def __init__(
        self, process: subprocess.Popen[bytes], channel: wire.Channel, hung_after_s: float
    ) -> None:
        self.heard = time.monotonic()  # the reading thread's last word (any message)
        self.answered = False  # whether any word came yet
        self.killed: str | None = None  # the deadline missed, once killed
        self._process = process
        self._channel = channel
        self._hung_after_s = hung_after_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-load-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        beat = min(HEARTBEAT_S, self._hung_after_s / 4)
        pings = itertools.count(1)
        woke = time.monotonic()
        while not self._done.wait(beat):
            now = time.monotonic()
            late, woke = now - woke - beat, now
            if late > self._hung_after_s / 2:
                self.heard = now  # this process did not run meanwhile (sleep, starved)
                continue
            limit = self._hung_after_s * (1 if self.answered else STARTUP_FACTOR)
            if now - self.heard > limit:
                self.killed = f"no answer in {limit:g} s while loading, killed"
                log.warning("worker (pid %d): %s", self._process.pid, self.killed)
                with contextlib.suppress(OSError):
                    self._process.kill()
                return
            try:
                self._channel.send(wire.Ping(next(pings)))
            except OSError:
                return  # it is gone: the load's answer says how

    def stop(self) -> None:
        """Stop watching (the load answered, or the worker ended)."""
        self._done.set()
        self._thread.join()


def _rotate(log_path: Path) -> None:
    """Keep the previous worker's log beside the new one (``.1``): a crash's story."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if log_path.exists():
        os.replace(log_path, log_path.with_name(log_path.name + ".1"))


def _worker_environ(environ: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(os.environ if environ is None else environ)
    # On an abort ggml attaches gdb to print a backtrace: seconds, and pages of it in
    # the log where the user needs the one line that says why.
    env.setdefault("GGML_NO_BACKTRACE", "1")
    return env


def start_worker(
    spec: ModelSpec,
    *,
    log_path: Path,
    links_dir: Path | None = None,
    prompt_cache_key: bytes | None = None,
    command: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    call_timeout_s: float | None = None,
    hung_after_s: float | None = None,
    grace_s: float | None = None,
) -> WorkerEngine:
    """Start a worker, load ``spec`` in it and return its engine once it is ready.

    Raises ``ModelLoadError`` (the worker's own refusal: a bad file, no memory) or
    ``EngineCrashed`` with ``on_load`` set when the worker died while loading.
    ``command`` replaces ``worker_command()`` (tests start a worker that fails on cue).
    The watchdog's deadlines: ``call_timeout_s`` (the server's generation timeout; None:
    calls are watched by the heartbeat alone), ``hung_after_s`` (``HUNG_AFTER_S``; from
    the start, the load included) and ``grace_s`` (``DEADLINE_GRACE_S``).
    """
    plan = spec.local
    if plan is None:
        raise ModelLoadError(f"{spec.model_id} is a remote model; it does not load here")
    _rotate(log_path)
    started = time.perf_counter()
    windows = os.name == "nt"
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
            list(command or worker_command()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_file,
            env=_worker_environ(environ),
            # NEW_PROCESS_GROUP | NO_WINDOW; elsewhere its own session: the terminal's
            # Ctrl-C is the app's to act on.
            creationflags=0x00000200 | 0x08000000 if windows else 0,
            start_new_session=not windows,
        )
    assert process.stdin is not None and process.stdout is not None
    channel = wire.Channel(process.stdout, process.stdin, wire.Reply)
    hung_after_s = HUNG_AFTER_S if hung_after_s is None else hung_after_s
    watch = _LoadWatch(process, channel, hung_after_s)
    try:
        channel.send(
            wire.Open(
                spec.file,
                wire.text(spec.model_id),
                spec.kind,
                spec.context_length,
                spec.gpu_layers,
                spec.chat_template,
                spec.reasoning_format,
                spec.threads,
                spec.extra_files,
                plan,
                links_dir,
                prompt_cache_key,
            )
        )
        while isinstance(first := channel.receive(), wire.Pong):
            watch.heard = time.monotonic()
            watch.answered = True
    except (OSError, wire.WireError):
        first = None
    finally:
        watch.stop()
    if isinstance(first, wire.Ready):
        elapsed = time.perf_counter() - started
        log.info(
            "worker %s (pid %d) ready in %.2f s, %d slots",
            spec.model_id,
            process.pid,
            elapsed,
            first.parallel,
        )
        # The report names the model as this process does (an id from a file name that
        # is not UTF-8 crossed the pipe escaped).
        ready = wire.Ready(replace(first.report, model_id=spec.model_id), first.parallel)
        return WorkerEngine(
            process,
            channel,
            ready,
            model_id=spec.model_id,
            log_path=log_path,
            started_s=elapsed,
            hung_after_s=hung_after_s,
            call_timeout_s=call_timeout_s,
            grace_s=DEADLINE_GRACE_S if grace_s is None else grace_s,
        )
    try:
        code: int | None = process.wait(CLOSE_TIMEOUT_S)
    except subprocess.TimeoutExpired:  # it said something other than Ready, then hung
        process.kill()
        code = process.wait()
    for stream in (process.stdin, process.stdout):
        stream.close()
    if isinstance(first, wire.Fault):
        raise error_of(first)
    if watch.killed is not None:
        shown = shown_tail(log_tail(log_path))
        raise EngineCrashed(
            f"llama.cpp stopped responding while loading {spec.model_id} ({watch.killed})",
            model=spec.model_id,
            how=watch.killed,
            log_tail=shown,
            on_load=True,
        )
    raise crash_error(spec.model_id, code, log_tail(log_path), on_load=True)
