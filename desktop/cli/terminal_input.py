"""Where a terminal chat's lines come from, and what its Ctrl-C does.

Kept apart from ``chat.py`` (the conversation) because signal handling has its own rule:
everything here runs on the main thread, the only one Python delivers signals to.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType


class CtrlC:
    """SIGINT for a whole terminal session: stops a streaming answer, interrupts the
    prompt, or (between the two) is kept for the next prompt.

    Installed on the main thread, which alone runs the session. Python's own handler
    raises KeyboardInterrupt wherever the main thread happens to be, so a Ctrl-C that
    lands between an answer and the next prompt used to end the program with status 130.
    """

    def __init__(self) -> None:
        self.cancel: threading.Event | None = None  # set while an answer streams
        self.at_prompt = False
        self.pending = False

    def __call__(self, _signum: int, _frame: FrameType | None) -> None:
        if self.cancel is not None:
            self.cancel.set()
        elif self.at_prompt:
            raise KeyboardInterrupt
        else:
            self.pending = True


def prompted(ctrl_c: CtrlC) -> Iterator[str | None]:
    """Lines typed at a ``> `` prompt; None for a Ctrl-C there (or just before it)."""
    while True:
        if ctrl_c.pending:
            ctrl_c.pending = False
            yield None
            continue
        try:
            ctrl_c.at_prompt = True
            try:
                with _waking():
                    line = input("> ")
            finally:
                ctrl_c.at_prompt = False
        except EOFError:
            print(file=sys.stderr)
            return
        except KeyboardInterrupt:
            yield None
            continue
        yield line


WAKE_S = 0.1  # how often the prompt wakes to run a Ctrl-C that missed its wait


def _woken(_signum: int, _frame: FrameType | None) -> None:
    """Does nothing: its only work is to interrupt the prompt's wait (see _waking)."""


@contextlib.contextmanager
def _waking() -> Iterator[None]:
    """While inside, the main thread's blocking wait is interrupted every WAKE_S seconds.

    readline shows the prompt, then waits in select(); Python runs a signal's handler only
    when that wait is interrupted. A Ctrl-C that lands between the two (a loaded machine
    pauses the process right after the prompt) only marks the signal and the wait goes on
    until the next key: the prompt ignored Ctrl-C. A periodic SIGALRM interrupts the wait,
    and the marked Ctrl-C then runs. POSIX only (Windows has no setitimer, nor readline).
    """
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    previous = signal.getsignal(signal.SIGALRM)
    try:  # armed inside: a Ctrl-C raised at any point still disarms it
        signal.signal(signal.SIGALRM, _woken)
        signal.setitimer(signal.ITIMER_REAL, WAKE_S, WAKE_S)
        yield
    finally:
        stop_waking()
        signal.signal(signal.SIGALRM, previous)


def stop_waking() -> None:
    """Disarm the prompt's timer (again, at the session's end: a Ctrl-C landing in
    _waking's clean-up could leave it armed, and once Python resets its handlers at exit
    an alarm would kill the process)."""
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)


def script() -> Iterator[str | None]:
    """Lines of standard input (a script), to EOF."""
    if sys.stdin is None:
        return
    for line in sys.stdin:
        yield line.rstrip("\r\n")


@contextlib.contextmanager
def interrupt_sets(cancel: threading.Event) -> Iterator[None]:
    """While inside, Ctrl-C sets ``cancel`` instead of raising (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    session = signal.getsignal(signal.SIGINT)
    if isinstance(session, CtrlC):  # an interactive session's own handler
        session.cancel = cancel
        try:
            yield
        finally:
            session.cancel = None
        return

    def stop(_signum: int, _frame: FrameType | None) -> None:
        cancel.set()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
