"""Many streaming clients at once: beyond the queue they are refused at once, never hung."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import httpx

from tests.conftest import wait_until
from tests.server.conftest import serve

HI = [{"role": "user", "content": "hello"}]
# Threads in asyncio's default executor, where streams once waited for their turn: with
# more waiting streams than this, later requests never reached the scheduler's queue.
DEFAULT_POOL = min(32, (os.cpu_count() or 1) + 4)


def _stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "edgedesk-stream"]


def test_streams_beyond_a_full_queue_get_429_at_once_and_the_rest_finish(
    tmp_path: Path, tiny_chat
) -> None:
    queue_max, extra = DEFAULT_POOL, 3
    # One slot: the holder below occupies it, so every later stream queues.
    with serve(tmp_path / "sq", [tiny_chat], delay_s=0.02, queue_max=queue_max, parallel=1) as srv:
        url, auth = f"{srv.url}/chat/completions", {"Authorization": f"Bearer {srv.key}"}
        body = {"model": "tiny-chat", "messages": HI, "max_tokens": 3, "stream": True}
        answers: dict[int, tuple[int, str | None, bytes, float]] = {}
        left: list[bool] = []

        def ask(i: int) -> None:
            with httpx.stream("POST", url, json=body, headers=auth, timeout=60) as response:
                answers[i] = (
                    response.status_code,
                    response.headers.get("retry-after"),
                    response.read(),
                    time.monotonic(),
                )

        hang_up = threading.Event()

        def leave() -> None:  # a client that gives up while queued, when the test says so
            # A raw socket, so hanging up waits on the test's event, not on a read timeout
            # that a loaded machine can reach before the other clients are even queued.
            host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
            payload = json.dumps(body).encode()
            head = (
                f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {srv.key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n"
            ).encode()
            with socket.create_connection((host, int(port)), timeout=60) as sock:
                sock.sendall(head + payload)
                hang_up.wait(60)
            left.append(True)

        holder = {**body, "max_tokens": 1000}
        with httpx.stream("POST", url, json=holder, headers=auth, timeout=60) as running:
            lines = running.iter_lines()  # kept: a dropped iterator closes the response
            next(lines)  # its first event is out: it holds the model
            leaver = threading.Thread(target=leave, daemon=True)
            leaver.start()
            wait_until(lambda: srv.scheduler.queue_depth == 1, 30, "one stream queued")
            threads = [
                threading.Thread(target=ask, args=(i,), daemon=True)
                for i in range(queue_max - 1 + extra)
            ]
            for thread in threads:
                thread.start()
            refused = lambda: [a for a in answers.values() if a[0] == 429]  # noqa: E731
            wait_until(lambda: len(refused()) == extra, 30, f"{extra} streams refused")
            # Refused while the holder still holds the model: at once, not when a turn came.
            assert all(a[1] is not None and int(a[1]) >= 1 for a in refused())
            assert srv.scheduler.queue_depth == queue_max
            hang_up.set()
            leaver.join(30)
            assert left  # it hung up while queued
        for thread in threads:
            thread.join(60)
        served = [a for a in answers.values() if a[0] == 200]
        assert len(served) == queue_max - 1
        assert all(a[2].rstrip().endswith(b"data: [DONE]") for a in served)
        # Every stream's thread ended: finished, refused, abandoned or cut off.
        wait_until(lambda: not _stream_threads(), 30, "every stream's thread ended")
        assert not srv.scheduler.busy and srv.scheduler.queue_depth == 0


def test_a_client_that_leaves_mid_stream_ends_its_thread(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "dc", [tiny_chat], delay_s=0.02) as srv:
        body = {"model": "tiny-chat", "messages": HI, "max_tokens": 1000, "stream": True}
        with httpx.stream(
            "POST",
            f"{srv.url}/chat/completions",
            json=body,
            timeout=30,
            headers={"Authorization": f"Bearer {srv.key}"},
        ) as response:
            lines = response.iter_lines()
            next(lines)
            assert _stream_threads()  # the producer runs on its own thread
        wait_until(lambda: not _stream_threads(), 30, "the stream's thread ends with it")
