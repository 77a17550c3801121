"""Run the real agent CLIs and ``edgedesk serve`` as child processes, on loopback only.

The clients come from ``scripts/agent-clients.sh`` (npm, into
``~/.cache/edgedesk/agent-clients`` or ``EDGEDESK_AGENT_CLIENTS``). Each runs with its
home, config and state in a temporary folder and with its update checks and telemetry
off, configured exactly by the setup ``docs/api.md`` and the Server screen show.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.server._client_setups import KEY, MODEL, claude_code, codex_cli, with_context
from tests.agents.tiny_agent_model import CONTEXT
from tests.fixtures.children import free_port, stop

REPO = Path(__file__).resolve().parents[2]
CLIENTS = Path(
    os.environ.get("EDGEDESK_AGENT_CLIENTS")
    or Path.home() / ".cache" / "edgedesk" / "agent-clients"
)
CLIENT_TIMEOUT_S = 180  # a cold Gemma prompt of ~15k tokens on a shared CI machine
SERVE_TIMEOUT_S = 120


def client_binary(name: str) -> Path:
    """The installed client ``name`` (codex, claude), or skip the test saying why."""
    path = CLIENTS / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.skip(
            f"{name} is not installed in {CLIENTS} (scripts/agent-clients.sh "
            "installs it where npm is present)"
        )
    return path


def quiet_env(home: Path) -> dict[str, str]:
    """An environment for a client: its own HOME, no proxy for loopback, no telemetry."""
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local"),
        NO_PROXY="127.0.0.1,localhost",
        NO_COLOR="1",
    )
    return env


def codex_env(home: Path, url: str, model: str, key: str) -> dict[str, str]:
    """Codex CLI with the docs' ``config.toml`` (in CODEX_HOME) and its key variable."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    setup = codex_cli(url).replace(MODEL, model)
    (codex_home / "config.toml").write_text(setup, encoding="utf-8")
    [var] = re.findall(r"export (\w+)=", setup)
    return {**quiet_env(home), "CODEX_HOME": str(codex_home), var: key}


def claude_env(
    home: Path, url: str, model: str, key: str, context: int = CONTEXT
) -> dict[str, str]:
    """Claude Code with the docs' ``export`` lines applied (``context``: the served
    model's, as the Server screen fills it in)."""
    env = {**quiet_env(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    setup = with_context(claude_code(url), context)
    for name, value in re.findall(r"^export (\w+)=(\S*)", setup, re.M):
        env[name] = value.replace(MODEL, model).replace(KEY, key)
    return env


def run_client(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a client to completion with no stdin (it must not wait for a terminal).

    The npm launchers start the native binary as a child: the client runs in its own
    process group, and all of it is killed if it overruns.
    """
    cwd.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=CLIENT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(
            f"{Path(cmd[0]).name} did not finish in {CLIENT_TIMEOUT_S} s:\n{(out + err)[-3000:]}"
        )
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@dataclass
class Serving:
    """A running ``edgedesk serve`` child: its /v1 URL, a key and the model id."""

    url: str
    key: str
    model: str
    home: Path
    log: deque[str]  # the server's last lines on stderr

    def tail(self) -> str:
        """What the server printed last, for a failing test's message."""
        return "".join(self.log)[-2000:]

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")


def _edgedesk(home: Path, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "EDGEDESK_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "desktop", *args], env=env, cwd=REPO, text=True, **kwargs
    )


@contextmanager
def edgedesk_serve(home: Path, model: Path) -> Iterator[Serving]:
    """``edgedesk keys create agents``, then ``edgedesk serve --model MODEL --port N``."""
    created = _edgedesk(
        home, "keys", "create", "agents", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = created.communicate(timeout=SERVE_TIMEOUT_S)
    assert created.returncode == 0, err
    key = out.split()[0]
    proc = _edgedesk(
        home,
        "serve",
        "--model",
        str(model),
        "--port",
        str(free_port()),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    stderr = proc.stderr
    log: deque[str] = deque(maxlen=200)
    url = ""
    for line in stderr:  # the ready line names the address once the server listens
        log.append(line)
        found = re.search(r"on (http://\S+/v1)", line)
        if found:
            url = found.group(1)
            break
    # Keep reading what the server prints, so it never blocks on a full pipe.
    drain = threading.Thread(target=lambda: log.extend(stderr), daemon=True)
    drain.start()
    try:
        assert url, "".join(log)
        models = httpx.get(
            f"{url}/models", headers={"Authorization": f"Bearer {key}"}, timeout=30
        ).json()
        yield Serving(url, key, models["data"][0]["id"], home, log)
    finally:
        stop(proc)
        drain.join(10)
        stderr.close()


@dataclass
class ForcingProxy:
    """A loopback relay that forces the first tool call of a conversation.

    Neither CLI has a flag for ``tool_choice``; to make a tiny model call a tool, this
    adds ``force`` as the ``tool_choice`` of a request that offers tools and carries no
    tool result yet, and relays everything else unchanged. ``seen`` keeps each body the
    client sent, as sent.
    """

    upstream: str  # the server root, no /v1
    force: dict[str, Any]
    seen: list[dict[str, Any]] = field(default_factory=list)

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free loopback port; yields its root URL."""
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                relay.seen.append(json.loads(raw))
                if body.get("tools") and not _has_tool_result(body):
                    body["tool_choice"] = relay.force
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "content-length", "accept-encoding")
                }
                with httpx.Client(timeout=CLIENT_TIMEOUT_S) as http:
                    reply = http.post(relay.upstream + self.path, json=body, headers=headers)
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers.get("content-type", ""))
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def _has_tool_result(body: dict[str, Any]) -> bool:
    """Does this request already carry a tool's result (Responses, Chat Completions or
    Anthropic shape)?"""
    for item in body.get("input") or body.get("messages") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output" or item.get("role") == "tool":
            return True
        content = item.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return True
    return False
