"""Run ``edgedesk`` in a pseudo-terminal and answer its prompts, as a person at a terminal.

A command that asks (a passphrase twice, the key backup offer) only does so when stdin
and stdout are a terminal; pipes get the script's behaviour. POSIX only.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def at_terminal(
    args: Sequence[str], answers: Sequence[tuple[str, str]], *, timeout_s: float = 120
) -> tuple[int, str]:
    """Run ``edgedesk ARGS``; when the output shows each prompt in turn, type its answer.

    Returns the exit code and everything the terminal showed.
    """
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once (nothing else runs after a fork)
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "desktop", *args])
    shown = b""
    seen = 0  # where the next prompt is looked for: a prompt repeated is a new one
    pending = list(answers)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                os.kill(pid, signal.SIGKILL)  # hung waiting for an answer nobody gives
                break
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            while pending and shown.find(pending[0][0].encode(), seen) >= 0:
                prompt, answer = pending.pop(0)
                seen = shown.find(prompt.encode(), seen) + len(prompt.encode())
                os.write(fd, answer.encode() + b"\n")
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), shown.decode("utf-8", "replace")
