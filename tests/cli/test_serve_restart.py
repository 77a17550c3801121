"""``edgedesk serve`` killed with -9 while a stream is open binds its port again at once.

The killed server's connection lingers (FIN_WAIT/TIME_WAIT) for about a minute; without
SO_REUSEADDR the next ``serve`` on the same port was refused "Address already in use".
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.fixtures.children import free_port, running, wait_answering


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 and TIME_WAIT are POSIX's")
def test_a_restart_after_kill_9_with_a_stream_open_binds_the_same_port(
    tmp_path: Path, tiny_chat: Path
) -> None:
    port = free_port()
    env = {**os.environ, "EDGEDESK_HOME": str(tmp_path / "home"), "EDGEDESK_OFFLINE": "1"}
    cmd = [
        sys.executable,
        *("-m", "desktop", "serve", "--no-auth", "--model", str(tiny_chat)),
        *("--port", str(port)),
    ]
    url = f"http://127.0.0.1:{port}"
    with running(cmd, env=env, log=tmp_path / "first.log") as first:
        wait_answering(url + "/health", first)
        body = {
            "model": "tiny-chat",
            "stream": True,
            "max_tokens": 4000,
            "messages": [{"role": "user", "content": "count to a thousand"}],
        }
        with (
            httpx.Client(timeout=60) as client,
            client.stream("POST", url + "/v1/chat/completions", json=body) as stream,
        ):
            lines = stream.iter_lines()
            assert next(lines).startswith("data:")  # the stream is open and answering
            first.kill()
            first.wait(30)
            with contextlib.suppress(httpx.HTTPError):
                for _ in lines:  # the stream breaks off; the client then closes its end
                    pass
    # The old connection now lingers on the port (FIN_WAIT/TIME_WAIT), as after any crash.
    with running(cmd, env=env, log=tmp_path / "second.log") as second:
        wait_answering(url + "/health", second, timeout=120)
    log = (tmp_path / "second.log").read_text(encoding="utf-8", errors="replace")
    assert "cannot listen" not in log, log
    # A port that another live server holds is still refused (reuse is not sharing).
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        refused = subprocess.run(
            [*cmd[:-1], str(taken)],
            check=False,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert refused.returncode != 0 and "cannot listen" in refused.stderr
