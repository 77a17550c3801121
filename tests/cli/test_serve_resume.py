"""`edgedesk serve` stopped with SIGTERM keeps its conversations: the next start resumes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

SYSTEM = "You are a careful coding agent; read every file before you edit it. " * 12


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _serve(model: Path, home: Path) -> Iterator[str]:
    port = _port()
    env = {**os.environ, "EDGEDESK_HOME": str(home), "EDGEDESK_OFFLINE": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop",
            "serve",
            "--model",
            str(model),
            "--port",
            str(port),
            "--no-auth",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready = threading.Event()

    def watch() -> None:  # the server says on stderr when it listens
        assert proc.stderr is not None
        for line in proc.stderr:
            if "Serving the OpenAI-compatible API" in line:
                ready.set()
        ready.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert ready.wait(120) and proc.poll() is None, "edgedesk serve did not start"
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        watcher.join(10)  # it ends when the server's stderr does
        assert proc.stderr is not None
        proc.stderr.close()
        assert code == 0  # shut down cleanly: models unloaded, caches saved


def _ask(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"model": "tiny-chat", "messages": messages, "max_tokens": 4, "temperature": 0}
    response = httpx.post(f"{url}/chat/completions", json=body, timeout=120)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_restarted_server_resumes_the_session_from_its_disk_cache(
    tiny_chat: Path, tmp_path: Path
) -> None:
    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hello"}]
    with _serve(tiny_chat, tmp_path / "home") as url:
        one = _ask(url, first)
    assert list((tmp_path / "home" / "cache" / "prompt-cache").rglob("*.kv"))
    answer = one["choices"][0]["message"]["content"]
    nxt = [
        *first,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "and then?"},
    ]
    with _serve(tiny_chat, tmp_path / "home") as url:
        two = _ask(url, nxt)
    cached = two["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= one["usage"]["prompt_tokens"] - 1
