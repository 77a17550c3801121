"""Starting EdgeDesk again after it quit (a language change asks for a restart)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence


def relaunch_command(
    executable: str | None = None, orig_argv: Sequence[str] | None = None
) -> list[str]:
    """The command line that started this process (``python -m desktop …``, the
    ``edgedesk`` script, a frozen app), to start it once more."""
    argv = list(sys.orig_argv if orig_argv is None else orig_argv)
    return [executable or sys.executable, *argv[1:]]


def relaunch() -> None:
    """Start a new EdgeDesk with this one's command line, on its own (it outlives us).

    Called after the window shut down and released its single-instance claim: the new
    process finds no window to hand over to and opens its own.
    """
    subprocess.Popen(  # noqa: S603 - our own command line, as it was started
        relaunch_command(),
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        close_fds=True,
    )
