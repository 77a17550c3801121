"""The ``edgedesk`` command: parse arguments, build the context, run one verb.

Each verb lives in its own module with a ``register(subparsers)`` function that sets
``handler`` on its parser. Errors the user can fix print one line and exit non-zero; a
bug prints one line naming the log file that holds its traceback (``desktop.base.crash``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from desktop.base.crash import EXIT_BUG, EXIT_INTERRUPTED, install_thread_net, report_crash, shown
from desktop.base.errors import EdgeDeskError
from desktop.cli.options import common_options
from desktop.cli.version import VersionAction

Handler = Callable[[argparse.Namespace], int]
__all__ = ["Handler", "build_parser", "common_options", "main"]


def _verb_modules() -> list[Any]:
    from desktop.cli import (
        audit,
        auth,
        bench,
        chat,
        chats,
        data,
        docs,
        doctor,
        encryption,
        keys,
        mcp,
        models,
        network,
        policy,
        remotes,
        run,
        serve,
        stats,
        tools,
    )

    return [
        run,
        chat,
        models,
        policy,
        network,
        auth,
        docs,
        chats,
        keys,
        serve,
        stats,
        bench,
        data,
        doctor,
        remotes,
        tools,
        mcp,
        encryption,
        audit,
    ]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every verb registered."""
    parser = argparse.ArgumentParser(
        prog="edgedesk",
        description="Private, on-device LLMs: chat, documents and a local OpenAI-compatible API.",
        parents=[common_options()],
    )
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument(
        "--open",
        metavar="FILE",
        help="open FILE in the window (a .gguf model is imported, a chat "
        "export is added); if EdgeDesk is already open, that window does it",
    )
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND")
    for module in _verb_modules():
        module.register(sub)
    return parser


def _fail(message: str, code: int) -> int:
    with contextlib.suppress(OSError, ValueError):  # stderr gone: the exit code still tells
        print(f"edgedesk: error: {shown(message, 2000)}", file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``edgedesk`` command line; returns the process exit code.

    Nothing escapes as a traceback: Ctrl-C at any moment is one line and 130, a bug is
    one line naming the crash log and ``EXIT_BUG``.
    """
    for stream in (sys.stdout, sys.stderr):
        # A non-UTF-8 file name echoed by argparse or a library must not crash a print.
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if argv is None:  # the real process (not a caller passing its own arguments)
        install_thread_net("edgedesk")  # the server's and the timers' threads too
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except SystemExit:
        raise  # argparse's usage errors and --help: already said, with their own code
    except EdgeDeskError as exc:  # raised while handling another error (e.g. in close())
        return _fail(exc.message, exc.exit_code)
    except Exception as exc:
        from desktop.engine import library_error

        problem = library_error(exc)  # llama.cpp's library does not load: not a bug of ours
        if problem is not None:
            return _fail(problem.message, problem.exit_code)
        try:
            return _fail(
                report_crash(
                    exc,
                    "edgedesk "
                    + " ".join(shown(a, 40) for a in (sys.argv[1:] if argv is None else argv)),
                ),
                EXIT_BUG,
            )
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    try:
        if handler is None:
            from desktop.cli.gui import launch_gui

            return launch_gui(args)
        return handler(args)
    except EdgeDeskError as exc:
        return _fail(exc.message, exc.exit_code)
    except BrokenPipeError:
        # `edgedesk ... | head` closed the pipe: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
