"""Issue 23's client table: each real agent CLI against a running server, one JSON line each.

Usage (clients from ``scripts/agent-clients.sh --all``; the server already running)::

    python -m tests.agents.client_table NAME URL KEY MODEL [codex,claude,opencode,oss]

``URL`` is the server's ``…/v1`` address; ``oss`` runs ``codex exec --oss`` (Codex's Ollama
mode, no key: serve with ``--no-auth``). Each client gets "Say hello." through a loopback
relay that records every request's status (and the body of a refusal), and is stopped
after ``TABLE_TIMEOUT`` seconds (default 150): a small model may ramble for thousands of
tokens when the client sets no output limit, and the question here is whether the server
takes the request, not how long the model talks.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.agents.clients import CLIENTS, claude_env, codex_env, quiet_env

BIN = CLIENTS / "node_modules" / ".bin"
TIMEOUT = int(os.environ.get("TABLE_TIMEOUT", "150"))
SEEN: list[dict[str, Any]] = []


def relay(upstream_port: int) -> int:
    """A streaming loopback relay to ``upstream_port`` that notes each status; its port."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _relay(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else None
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=TIMEOUT)
            headers = {
                k: v
                for k, v in self.headers.items()
                if k.lower() not in ("host", "accept-encoding")
            }
            conn.request(self.command, self.path, body=body, headers=headers)
            reply = conn.getresponse()
            seen: dict[str, Any] = {
                "request": f"{self.command} {self.path.split('?')[0]}",
                "status": reply.status,
            }
            SEEN.append(seen)
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            first = b""
            try:
                while chunk := reply.read1(65536):
                    first = first if len(first) > 400 else first + chunk
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                seen["client_left_mid_answer"] = True
            if reply.status != 200:
                seen["body"] = first[:300].decode("utf-8", "replace")
            conn.close()

        do_GET = do_POST = do_DELETE = _relay

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return int(server.server_address[1])


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Run one client; its exit, time, answer, first error line and the requests seen."""
    SEEN.clear()
    cwd.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
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
        out, err = proc.communicate(timeout=TIMEOUT)
        code: int | str = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = "stopped"
    errors = [
        line.strip()
        for line in (out + "\n" + err).splitlines()
        if re.search(r"error|refus|too old", line, re.I)
        and not re.search(r"bubblewrap|PATH aliases", line)
    ]  # Codex's own warnings
    return {
        "exit": code,
        "seconds": round(time.monotonic() - start, 1),
        "answer": out.strip()[-200:],
        "first_error": errors[0][:300] if errors else "",
        "requests": list(SEEN),
    }


def main() -> None:
    """Run the chosen clients against the server named on the command line."""
    name, url, key, model = sys.argv[1:5]
    only = sys.argv[5].split(",") if len(sys.argv) > 5 else ["codex", "claude", "opencode", "oss"]
    port = int(url.split(":")[2].split("/")[0])
    url = url.replace(f":{port}", f":{relay(port)}")
    tmp = Path(tempfile.mkdtemp(prefix=f"client-table-{name}-"))
    runs: dict[str, dict[str, Any]] = {}
    if "codex" in only:
        runs["codex exec"] = run(
            [str(BIN / "codex"), "exec", "--skip-git-repo-check", "Say hello."],
            codex_env(tmp / "codex", url, model, key),
            tmp / "w1",
        )
    if "claude" in only:
        runs["claude -p"] = run(
            [str(BIN / "claude"), "-p", "Say hello."],
            claude_env(tmp / "claude", url, model, key),
            tmp / "w2",
        )
    if "opencode" in only:
        home = tmp / "opencode"
        home.mkdir(parents=True)
        config = {
            "provider": {
                "edgedesk": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "EdgeDesk",
                    "options": {"baseURL": url, "apiKey": "{env:EDGEDESK_API_KEY}"},
                    "models": {model: {"name": model}},
                }
            },
            "model": f"edgedesk/{model}",
        }
        (home / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
        env = {
            **quiet_env(home),
            "OPENCODE_CONFIG": str(home / "opencode.json"),
            "EDGEDESK_API_KEY": key,
            "XDG_STATE_HOME": str(home / ".state"),
            **dict.fromkeys(
                [
                    "OPENCODE_DISABLE_MODELS_FETCH",
                    "OPENCODE_DISABLE_AUTOUPDATE",
                    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
                    "OPENCODE_DISABLE_LSP_DOWNLOAD",
                    "OPENCODE_DISABLE_SHARE",
                ],
                "1",
            ),
        }
        runs["opencode run"] = run(
            [str(BIN / "opencode"), "run", "-m", f"edgedesk/{model}", "Say hello."], env, tmp / "w3"
        )
    if "oss" in only:
        home = tmp / "oss"
        home.mkdir(parents=True)
        env = {**quiet_env(home), "CODEX_HOME": str(home), "CODEX_OSS_BASE_URL": url}
        runs["codex exec --oss"] = run(
            [
                str(BIN / "codex"),
                "exec",
                "--oss",
                "--local-provider",
                "ollama",
                "-m",
                model,
                "--skip-git-repo-check",
                "Say hello.",
            ],
            env,
            tmp / "w4",
        )
    for client, result in runs.items():
        print(json.dumps({"server": name, "client": client, **result}), flush=True)


if __name__ == "__main__":
    main()
