"""Real OpenAI-compatible servers to use as remote engines: ``edgedesk serve`` and
llama.cpp's own ``llama-server`` where one runs on this CPU (which one: the candidates
and their probe are in ``tests/benchmarks/llama_server_peer.py``; the ``llama_server_for``
fixture chooses once per model and session, probing with that model). Both run as child processes on 127.0.0.1."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.benchmarks.llama_server_peer import library_links
from tests.fixtures.children import free_port, running, wait_answering

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def _child(cmd: list[str], url: str, log: Path, env: dict[str, str]) -> Iterator[str]:
    with running(cmd, env=env, log=log, cwd=REPO) as proc:
        wait_answering(f"{url}/models", proc)
        yield url


@contextmanager
def edgedesk_serve(model: Path, home: Path) -> Iterator[str]:
    """``edgedesk serve --model MODEL --no-auth`` in its own EDGEDESK_HOME; yields /v1 URL."""
    port = free_port()
    env = {**os.environ, "EDGEDESK_HOME": str(home)}
    cmd = [
        sys.executable,
        "-m",
        "desktop",
        "serve",
        "--model",
        str(model),
        "--port",
        str(port),
        "--no-auth",
    ]
    home.mkdir(parents=True, exist_ok=True)
    with _child(cmd, f"http://127.0.0.1:{port}/v1", home / "serve.log", env) as url:
        yield url


@contextmanager
def llama_server(binary: Path, model: Path, work: Path) -> Iterator[str]:
    """llama.cpp's ``llama-server`` over ``model`` (alias ``gemma``); yields its /v1 URL."""
    port = free_port()
    env = {**os.environ, "LD_LIBRARY_PATH": library_links(binary, work / "libs")}
    cmd = [
        str(binary),
        "-m",
        str(model),
        "--alias",
        "gemma",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        "2048",
    ]
    with _child(cmd, f"http://127.0.0.1:{port}/v1", work / "llama-server.log", env) as url:
        yield url
