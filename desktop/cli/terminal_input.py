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
