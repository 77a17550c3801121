"""Real OpenAI-compatible servers to use as remote engines: ``edgedesk serve`` and
llama.cpp's own ``llama-server`` where one runs on this CPU (which one: the candidates
and their probe are in ``tests/benchmarks/llama_server_peer.py``; the ``llama_server_peer``
fixture chooses once per session). Both run as child processes on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.benchmarks.llama_server_peer import library_links
from tests.conftest import wait_until

READY_TIMEOUT_S = 180.0  # a cold start on a loaded CI machine; the loop ends as soon as ready
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _library_path(binary: Path, into: Path) -> str:
    """The soname links llama-server needs, made as the benchmark makes them."""
    return library_links(binary, into)


def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    """Until the child answers /models (it gives no other signal); it must not exit first."""
    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"the upstream server exited with {proc.returncode}")
        try:
            return httpx.get(f"{url}/models", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(ready, READY_TIMEOUT_S, "the upstream server ready")


@contextmanager
def _child(cmd: list[str], url: str, log: Path, env: dict[str, str]) -> Iterator[str]:
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
        try:
            _wait_ready(url, proc)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def edgedesk_serve(model: Path, home: Path) -> Iterator[str]:
    """``edgedesk serve --model MODEL --no-auth`` in its own EDGEDESK_HOME; yields /v1 URL."""
    port = _free_port()
    env = {**os.environ, "EDGEDESK_HOME": str(home)}
    cmd = [sys.executable, "-m", "desktop", "serve", "--model", str(model),
           "--port", str(port), "--no-auth"]
    home.mkdir(parents=True, exist_ok=True)
    with _child(cmd, f"http://127.0.0.1:{port}/v1", home / "serve.log", env) as url:
        yield url


@contextmanager
def llama_server(binary: Path, model: Path, work: Path) -> Iterator[str]:
    """llama.cpp's ``llama-server`` over ``model`` (alias ``gemma``); yields its /v1 URL."""
    port = _free_port()
    env = {**os.environ, "LD_LIBRARY_PATH": _library_path(binary, work / "libs")}
    cmd = [str(binary), "-m", str(model), "--alias", "gemma", "--host", "127.0.0.1",
           "--port", str(port), "-c", "2048"]
    with _child(cmd, f"http://127.0.0.1:{port}/v1", work / "llama-server.log", env) as url:
        yield url
