"""A worker process whose decode thread is stuck but whose reading thread lives.

``python -m tests.engine.stuck_worker MODE`` speaks the real wire protocol (``wire.py``):
it answers ``Open`` with ``Ready`` and every ``Ping`` with ``Pong``, as a real worker's
reading thread does while a GPU driver hangs inside llama.cpp, and then:

- ``silent``: never answers a call (a stream or a call that never ends);
- ``bad-frame``: answers a call with a frame header claiming 1 GiB and nothing after it;
- ``stop-on-load``: stops itself (SIGSTOP) as its load begins, every thread with it.

What a real llama.cpp cannot be made to do on cue; the app's side is the real one.
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import time
from pathlib import Path

from desktop.engine._types import LoadReport
from desktop.engine._worker import wire


def main(mode: str) -> int:
    """Serve the app's requests on standard input and output, stuck as ``mode`` says."""
    out = sys.stdout.buffer
    channel = wire.Channel(sys.stdin.buffer, out, wire.Request)
    first = channel.receive()
    if not isinstance(first, wire.Open):
        return 2
    if mode == "stop-on-load":
        os.kill(os.getpid(), signal.SIGSTOP)
    report = LoadReport(first.model_id, Path(first.path), 512, 0, False, 0.0, 0, "gguf")
    channel.send(wire.Ready(report, 1))
    while True:
        request = channel.receive()
        if request is None or isinstance(request, wire.Close):
            return 0
        if isinstance(request, wire.Ping):
            channel.send(wire.Pong(request.seq))
        elif mode == "bad-frame" and hasattr(request, "id"):
            out.write(struct.pack("<I", 1 << 30))  # a header, then nothing
            out.flush()
            time.sleep(3600)  # alive, and sending nothing more
        # "silent": the call never ends, its thread stuck


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
