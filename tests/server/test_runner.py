"""The runner: Nagle off on every accepted connection, and who reaps idle models."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from desktop.app import AppContext, build_context
from desktop.cli.serve import build_runner
from desktop.config import ServerSettings
from desktop.server.app import ResolverDirectory
from desktop.server.runner import ServerRunner
from tests.server.conftest import Served, free_port


def test_accepted_connections_have_nagle_off(server: Served) -> None:
    # With Nagle on, a kept-alive connection's first token waited ~40 ms for the
    # client's delayed ACK (measured: 47 ms vs 6 ms per request).
    with socket.create_connection(("127.0.0.1", server.runner.port)) as client:
        client.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200" in client.recv(4096)
        uvicorn_server = server.runner._server
        assert uvicorn_server is not None
        deadline = time.monotonic() + 5
        while not uvicorn_server.server_state.connections and time.monotonic() < deadline:
            time.sleep(0.01)
        accepted = [c.transport.get_extra_info("socket")
                    for c in uvicorn_server.server_state.connections]
        assert accepted
        for sock in accepted:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


def _reapers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "edgedesk-reaper"]


def _context(home: Path) -> AppContext:
    return build_context(environ={"EDGEDESK_HOME": str(home)},
                         cli_settings={"server.port": free_port()})


def test_the_windows_server_leaves_reaping_and_maintenance_to_the_windows_timers(
        tmp_path: Path) -> None:
    # The window reaps idle models and runs maintenance itself: a second timer here
    # doubled every collection rescan and unload.
    ctx = _context(tmp_path)
    try:
        runner = ctx.server
        assert not runner.housekeeping
        runner.start()
        assert runner.running and not _reapers()
    finally:
        ctx.close()


def test_the_headless_server_reaps_and_maintains_on_its_own_timer(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    try:
        runner = build_runner(ctx, [])
        assert runner.housekeeping
        runner.start()
        assert len(_reapers()) == 1
        runner.stop()
        assert not _reapers()  # stopping the server ends its timer too
    finally:
        ctx.close()


def test_the_housekeeping_timer_runs_maintenance_and_survives_its_failures(
        tmp_path: Path) -> None:
    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path)})
    calls: list[float] = []

    def maintain() -> None:
        calls.append(time.monotonic())
        raise RuntimeError("a locked file")  # logged; the next pass still comes

    settings = ServerSettings(require_key=False).model_copy(update={"port": 0})
    runner = ServerRunner(ctx.scheduler, ResolverDirectory(ctx.resolver), settings, None,
                          reap_interval_s=0.02, maintain=maintain, maintain_interval_s=0)
    try:
        runner.start()
        deadline = time.monotonic() + 5
        while len(calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(calls) >= 2
    finally:
        runner.stop()
        ctx.close()
    assert not _reapers()


def test_models_pulled_outside_the_catalog_are_served_and_paths_are_not(
        tmp_path: Path, tiny_chat: Path) -> None:
    import shutil

    import httpx

    from desktop.catalog.installed import InstalledModel

    ctx = build_context(environ={"EDGEDESK_HOME": str(tmp_path)},
                        cli_settings={"server.port": free_port(),
                                      "server.require_key": False})
    pulled = ctx.paths.models_dir / "someone" / "Tiny-GGUF" / "tiny-Q8_0.gguf"
    pulled.parent.mkdir(parents=True)
    shutil.copy(tiny_chat, pulled)
    ctx.installed.add(InstalledModel(id="tiny-Q8_0", files=(str(pulled),),
                                     size=pulled.stat().st_size, sha256=("0" * 64,),
                                     source="hub", repo="someone/Tiny-GGUF"))
    runner = ctx.server
    try:
        runner.start()
        listed = httpx.get(f"{runner.url}/models").json()["data"]
        assert "tiny-Q8_0" in {m["id"] for m in listed}  # a REPO:FILE pull is listed
        answer = httpx.post(f"{runner.url}/chat/completions", timeout=60, json={
            "model": "tiny-Q8_0", "max_tokens": 4,
            "messages": [{"role": "user", "content": "hi"}]})
        assert answer.status_code == 200, answer.text  # and served
        refused = httpx.post(f"{runner.url}/chat/completions", json={
            "model": str(pulled), "messages": [{"role": "user", "content": "hi"}]})
        assert refused.status_code == 404  # a client cannot name a file on this disk
    finally:
        runner.stop()
        ctx.close()
