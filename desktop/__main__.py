"""The `edgedesk` command and `python -m desktop`: one entry point for both.

Ctrl-C is one line and exit code 130 from the moment this module runs to the moment the
process ends. Two windows are Python's, and ``main`` closes them:

* after the command returns, Python still joins the threads it started (a vision
  encoder's pool, a timer) and runs its exit functions; a Ctrl-C there raises
  KeyboardInterrupt outside every ``try`` and Python prints a traceback;
* later, Python restores SIGINT's default action before it frees its modules, so a
  Ctrl-C in the last milliseconds killed the process with no word (exit status -2 to a
  parent, seen in ``tests/robustness/test_net.py``).

What is left is Python's own start-up, before this module runs: there the signal still
ends the process the way Python decides.
"""

import atexit
import contextlib
import os
import signal
import sys
from types import FrameType

EXIT_INTERRUPTED = 130  # desktop.base.crash.EXIT_INTERRUPTED, not imported: that takes time


class _Finished:
    """SIGINT once the command has returned ``code``: end now, with that code.

    The command's work is done and reported; a Ctrl-C while Python shuts down (joining a
    slow thread) only hurries it. Runs on the main thread, as every Python handler does.
    """

    def __init__(self, code: int) -> None:
        self.code = code

    def __call__(self, _signum: int, _frame: FrameType | None) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # closed, or in the middle of a write
                stream.flush()
        os._exit(self.code)


ENGINE_WORKER = "--engine-worker"  # a frozen app started as a model's worker process


def main() -> int:
    """Run the command line; Ctrl-C at any moment from here on is one line and exit 130
    (or, once the command has finished, the command's own exit code)."""
    if sys.argv[1:] == [ENGINE_WORKER]:
        from desktop.engine import worker_main

        sys.stderr.flush()
        os._exit(worker_main())
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started with Ctrl-C ignored
        finish: type[_Finished] | None = None
    else:
        finish = _Finished
        # The last exit function (the first registered): Python resets its own handlers
        # to SIGINT's default action after the exit functions, but leaves "ignore" alone.
        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
    try:
        from desktop.cli import main as cli_main

        code = cli_main()
        if finish is not None:  # the window's own handler may be in place: replace it
            signal.signal(signal.SIGINT, finish(code))
    except KeyboardInterrupt:  # while Python loaded the CLI, or just as it returned
        if finish is not None:
            signal.signal(signal.SIGINT, finish(EXIT_INTERRUPTED))
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write("edgedesk: error: interrupted\n")
        return EXIT_INTERRUPTED
    return code


if __name__ == "__main__":
    raise SystemExit(main())
