"""The last line of defence: an unexpected exception becomes one line and a log file.

Every entry point (the ``edgedesk`` command, the window, ``edgedesk serve``) ends in
``report_crash``: the traceback goes to ``crash.log`` in the log folder, the person sees
one line naming that file, and the process exits with ``EXIT_BUG``. It is a net, not a
fix: a problem a user can cause still deserves its own clear ``EdgeDeskError``.

Exit codes (documented in ``docs/architecture.md``): 0 success, 1–9 the ``EdgeDeskError``
kinds, 2 also a bad command line, 70 a bug (this module), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import datetime
import os
import tempfile
import traceback
import unicodedata
from pathlib import Path

EXIT_BUG = 70  # EX_SOFTWARE in sysexits.h: "an internal software error"
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C
CRASH_LOG = "crash.log"
_MAX_SHOWN = 300


def shown(text: object, limit: int = _MAX_SHOWN) -> str:
    """``text`` safe to print on one terminal line: control characters, undecodable bytes
    and line breaks escaped, cut to ``limit`` characters (a name can hold escape codes)."""
    out: list[str] = []
    for char in str(text):
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte of a non-UTF-8 file name (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") and char != "\u200d":
            out.append(repr(char)[1:-1] if code < 0x80 else f"\\u{code:04x}")
        else:
            out.append(char)
    joined = "".join(out)
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def _log_dir() -> Path:
    """The log folder (``EDGEDESK_HOME/logs`` or the OS's), without building settings:
    the crash may be in settings."""
    try:
        from desktop.base.config import Paths

        folder = Paths.from_env().log_dir
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    except Exception:
        return Path(tempfile.gettempdir())


def report_crash(exc: BaseException, where: str, log_dir: Path | None = None) -> str:
    """Append ``exc``'s traceback to the crash log; the one line to show the person."""
    folder = log_dir or _log_dir()
    log = folder / CRASH_LOG
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    text = "".join(traceback.format_exception(exc))
    try:
        with log.open("a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(f"--- {stamp} {where} (pid {os.getpid()})\n{text}\n")
        saved = f"the details are in {log}"
    except OSError:
        saved = "the details could not be saved"
    return f"unexpected error ({type(exc).__name__}: {shown(exc, 160)}); {saved}; please report it"


def install_thread_net(where: str) -> None:
    """Route an exception that ends a background thread (the server's, a timer's) to the
    crash log with one line on stderr, instead of Python's printed traceback."""
    import sys
    import threading

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None or isinstance(args.exc_value, SystemExit):
            return
        thread = args.thread.name if args.thread is not None else "a thread"
        line = report_crash(args.exc_value, f"{where}, thread {thread}")
        try:
            sys.stderr.write(f"edgedesk: error: {line}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    threading.excepthook = hook
