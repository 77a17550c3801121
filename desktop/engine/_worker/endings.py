"""What a worker's end means to its callers: how it ended, why, in the user's words.

A worker that dies leaves an exit status and the last lines of its log (llama.cpp's
assert, the OS's kill); a worker that refuses a request sends a ``Fault``. These turn
both into the errors the app answers with (``EngineCrashed``, the same ``EdgeDeskError``
class the worker raised), without the folder llama.cpp was built in. Pure functions,
callable from any thread.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Sequence
from pathlib import Path

from desktop.base import errors
from desktop.base.errors import EdgeDeskError, EngineCrashed
from desktop.engine._worker import wire

LOG_TAIL_LINES = 8


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> tuple[str, ...]:
    """The last non-empty lines of a worker's log (what llama.cpp said before it died)."""
    try:
        with path.open("rb") as file:
            file.seek(0, os.SEEK_END)
            size = file.tell()
            file.seek(max(0, size - 16384))
            text = file.read().decode("utf-8", "replace")
    except OSError:
        return ()
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return tuple(kept[-lines:])


def how_it_ended(returncode: int | None) -> str:
    """A worker's end in words: ``aborted (SIGABRT)``, ``killed (SIGKILL)``, ``exit code 3``."""
    if returncode is None:
        return "stopped answering"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        verb = {"SIGABRT": "aborted", "SIGKILL": "killed", "SIGSEGV": "crashed"}.get(name, "ended")
        return f"{verb} ({name})"
    return f"exit code {returncode}"


_SOURCE_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[^\s:]*[/\\])?([^/\\\s]+:\d+: )")


def shown_tail(tail: Sequence[str]) -> tuple[str, ...]:
    """A log tail as the user sees it: each line without the build folder's path."""
    return tuple(_SOURCE_PATH.sub(r"\1", line, count=1) for line in tail)


def _why(tail: Sequence[str]) -> str:
    """The log line that says why, if llama.cpp said (its assert, its error), without
    the folder the library was built in (``ggml.c:5515: GGML_ASSERT(...) failed``)."""
    for line in reversed(tail):
        if "GGML_ASSERT" in line or "GGML_ABORT" in line or "error" in line.lower():
            return _SOURCE_PATH.sub(r"\1", line.strip(), count=1)[:300]
    return ""


def crash_error(
    model_id: str, returncode: int | None, tail: Sequence[str], *, on_load: bool
) -> EngineCrashed:
    """The error every open request of a dead worker gets."""
    how = how_it_ended(returncode)
    why = _why(tail)
    if on_load:
        message = f"llama.cpp stopped while loading {model_id} ({how})"
    else:
        message = (
            f"the model {model_id} stopped unexpectedly ({how}); it reloads at the next request"
        )
    if why:
        message += f": {why}"
    shown = shown_tail(tail)
    return EngineCrashed(message, model=model_id, how=how, why=why, log_tail=shown, on_load=on_load)


def stopped_error(model_id: str, how: str, tail: Sequence[str]) -> EngineCrashed:
    """The error every open request of a worker the watchdog killed gets (``how``: the
    deadline it missed); the same ``model_crashed`` as a crash, so it is answered alike."""
    shown = shown_tail(tail)
    return EngineCrashed(
        f"the model {model_id} stopped responding ({how}); it reloads at the next request",
        model=model_id,
        how=how,
        log_tail=shown,
    )


def error_of(fault: wire.Fault) -> Exception:
    """The exception a worker's ``Fault`` stands for: the same ``EdgeDeskError`` class."""
    kind = getattr(errors, fault.error, None)
    if not (isinstance(kind, type) and issubclass(kind, EdgeDeskError)):
        return RuntimeError(fault.message)
    error: EdgeDeskError = kind.__new__(kind)
    EdgeDeskError.__init__(
        error, fault.message, param=fault.param, kind=fault.kind, params=fault.params
    )
    for name, value in fault.numbers.items():
        if name in wire.ERROR_NUMBERS:
            setattr(error, name, value)
    if fault.answer is not None:  # set on the instance by some errors (a remote's status)
        error.http_status, error.code, error.error_type = fault.answer
    if isinstance(error, errors.VisionUnsupported):
        error.model = fault.params.get("model", "")
    return error
