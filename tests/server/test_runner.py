"""The runner: Nagle off on every accepted connection, and which models it serves."""

from __future__ import annotations

import socket
from pathlib import Path

from desktop.root.context import build_context
from tests.conftest import wait_until
from tests.fixtures.children import free_port
from tests.server.conftest import Served


def test_accepted_connections_have_nagle_off(server: Served) -> None:
    # With Nagle on, a kept-alive connection's first token waited ~40 ms for the
    # client's delayed ACK (measured: 47 ms vs 6 ms per request).
    with socket.create_connection(("127.0.0.1", server.runner.port)) as client:
        client.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200" in client.recv(4096)
        uvicorn_server = server.runner._server
        assert uvicorn_server is not None
        wait_until(lambda: uvicorn_server.server_state.connections, 30, "the connection seen")
        accepted = [
            c.transport.get_extra_info("socket") for c in uvicorn_server.server_state.connections
        ]
        assert accepted
        for sock in accepted:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


def test_models_pulled_outside_the_catalog_are_served_and_paths_are_not(
    tmp_path: Path, tiny_chat: Path
) -> None:
    import shutil

    import httpx

    from desktop.catalog._installed import InstalledModel

    ctx = build_context(
        environ={"EDGEDESK_HOME": str(tmp_path)},
        cli_settings={"server.port": free_port(), "server.require_key": False},
    )
    pulled = ctx.paths.models_dir / "someone" / "Tiny-GGUF" / "tiny-Q8_0.gguf"
    pulled.parent.mkdir(parents=True)
    shutil.copy(tiny_chat, pulled)
    ctx.installed.add(
        InstalledModel(
            id="tiny-Q8_0",
            files=(str(pulled),),
            size=pulled.stat().st_size,
            sha256=("0" * 64,),
            source="hub",
            repo="someone/Tiny-GGUF",
        )
    )
    runner = ctx.api_server
    try:
        runner.start()
        listed = httpx.get(f"{runner.url}/models").json()["data"]
        assert "tiny-Q8_0" in {m["id"] for m in listed}  # a REPO:FILE pull is listed
        answer = httpx.post(
            f"{runner.url}/chat/completions",
            timeout=60,
            json={
                "model": "tiny-Q8_0",
                "max_tokens": 4,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        assert answer.status_code == 200, answer.text  # and served
        refused = httpx.post(
            f"{runner.url}/chat/completions",
            json={"model": str(pulled), "messages": [{"role": "user", "content": "hi"}]},
        )
        assert refused.status_code == 404  # a client cannot name a file on this disk
    finally:
        runner.stop()
        ctx.close()


def test_a_client_connecting_as_soon_as_the_server_says_it_serves_is_answered(
    tmp_path: Path,
) -> None:
    # `edgedesk serve` prints its "Serving" line from on_ready, before uvicorn's loop
    # runs: an IDE (or a test) connecting at that moment was refused under load.
    import signal
    import threading

    ctx = build_context(
        environ={"EDGEDESK_HOME": str(tmp_path)},
        cli_settings={"server.port": free_port(), "server.require_key": False},
    )
    runner = ctx.new_api_server()
    answers: list[bytes] = []
    early: list[socket.socket] = []

    def connect_at_once(url: str) -> None:
        # Connected before the server loop starts; the request is read once it does.
        client = socket.create_connection(("127.0.0.1", runner.port), timeout=30)
        client.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        early.append(client)

        def read_then_stop() -> None:
            answers.append(client.recv(4096))
            client.close()
            signal.raise_signal(signal.SIGTERM)  # serve_forever ends as on SIGTERM

        threading.Thread(target=read_then_stop, daemon=True).start()

    try:
        runner.serve_forever(on_ready=connect_at_once)
    finally:
        ctx.close()
    assert early and answers and answers[0].startswith(b"HTTP/1.1 200")
