"""A fake OpenAI-compatible server (a real uvicorn on 127.0.0.1) and a CONNECT proxy.

The fake's behaviour is chosen by the model name a request asks for:
``echo`` streams the last user message back word by word; ``busy`` answers 429; ``drop``
sends two events and cuts the connection; ``fails`` sends two events, then an error
event; ``halts`` sends two events, then nothing until ``release`` is set; ``endless``
streams until the client leaves (and then sets ``abandoned``); ``stall`` never answers.
``embedder`` reports its own token counts, ``bare-embedder`` none. Every request is counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

BLOB = b"GGUF" + bytes(range(256)) * 8  # a "model file" for download tests
MODELS = [
    "tooler",
    "echo",
    "busy",
    "drop",
    "fails",
    "halts",
    "endless",
    "stall",
    "embedder",
    "bare-embedder",
]
EMBED_TOKENS_EACH = 7  # the fake's token count per embedded text (no estimate gives it)
FAILURE = "the GPU node fell over"  # what ``fails`` reports mid-answer


@dataclass
class Fake:
    """What the fake server saw; the test reads it."""

    key: str | None = None  # required bearer key (None: any)
    requests: list[str] = field(default_factory=list)  # "METHOD /path model"
    bodies: list[dict[str, Any]] = field(default_factory=list)
    abandoned: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)  # ends a "stall"
    url: str = ""


def _event(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def build_app(fake: Fake) -> Starlette:
    """The fake's ASGI app."""

    def authorised(request: Request) -> bool:
        return fake.key is None or request.headers.get("authorization") == f"Bearer {fake.key}"

    def denied() -> JSONResponse:
        return JSONResponse({"error": {"message": "Invalid API key", "type": "auth"}}, 401)

    async def models(request: Request) -> Response:
        fake.requests.append("GET /v1/models")
        if not authorised(request):
            return denied()
        return JSONResponse(
            {"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]}
        )

    async def generate(request: Request) -> Response:
        body = await request.json()
        chat = request.url.path.endswith("/chat/completions")
        model = body.get("model")
        fake.requests.append(f"POST {request.url.path} {model}")
        fake.bodies.append(body)
        if not authorised(request):
            return denied()
        if model not in MODELS:
            return JSONResponse({"error": {"message": f"model {model} not found"}}, 404)
        if model == "busy":
            return JSONResponse(
                {"error": {"message": "too many requests"}}, 429, headers={"retry-after": "7"}
            )
        if model == "stall":
            while not fake.release.is_set():  # holds the answer until the test lets go
                await asyncio.sleep(0.02)
        if chat:
            text = str(body["messages"][-1]["content"])
        else:
            text = str(body["prompt"])
        words = [w + " " for w in text.split()] or ["(empty) "]

        def piece(word: str, finish: str | None = None) -> dict[str, Any]:
            choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
            if chat:
                choice["delta"] = {"content": word} if word else {}
            else:
                choice["text"] = word
            return {"id": "x", "object": "chunk", "model": model, "choices": [choice]}

        async def stream() -> AsyncIterator[bytes]:
            if model == "drop":
                yield _event(piece(words[0]))
                yield _event(piece("again "))
                raise ConnectionResetError("the fake drops the stream")
            if model == "halts":
                yield _event(piece(words[0]))
                yield _event(piece("again "))
                while not fake.release.is_set():
                    await asyncio.sleep(0.02)
                return
            if model == "fails":
                yield _event(piece(words[0]))
                yield _event(piece("again "))
                yield _event({"error": {"message": FAILURE, "type": "server_error"}})
                return
            if model == "tooler":
                call = {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
                yield _event({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
                for part in ('{"city": ', '"Paris"}'):
                    yield _event(
                        {
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {
                                        "tool_calls": [
                                            {"index": 0, "function": {"arguments": part}}
                                        ]
                                    },
                                }
                            ]
                        }
                    )
                yield _event(
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
                )
                yield b"data: [DONE]\n\n"
                return
            if model == "endless":
                try:
                    while True:
                        yield _event(piece("more "))
                        await asyncio.sleep(0.01)  # paces the fake, not the test
                finally:
                    fake.abandoned.set()
            for word in words:
                yield _event(piece(word))
            yield _event(piece("", "stop"))
            yield _event(
                {
                    "id": "x",
                    "choices": [],
                    "usage": {
                        "prompt_tokens": len(text.split()),
                        "completion_tokens": len(words),
                        "total_tokens": len(text.split()) + len(words),
                    },
                }
            )
            yield b"data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def embeddings(request: Request) -> Response:
        body = await request.json()
        fake.requests.append(f"POST /v1/embeddings {body.get('model')}")
        if not authorised(request):
            return denied()
        data = [
            {"index": i, "object": "embedding", "embedding": [float(len(t)), 1.0, 0.0]}
            for i, t in enumerate(body["input"])
        ]
        answer: dict[str, Any] = {"object": "list", "data": data[::-1], "model": body["model"]}
        if body["model"] != "bare-embedder":  # that one reports no usage
            tokens = EMBED_TOKENS_EACH * len(body["input"])
            answer["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return JSONResponse(answer)

    async def blob(request: Request) -> Response:
        fake.requests.append("GET /files/blob")
        return Response(BLOB, media_type="application/octet-stream")

    return Starlette(
        routes=[
            Route("/files/blob", blob),
            Route("/v1/models", models),
            Route("/v1/chat/completions", generate, methods=["POST"]),
            Route("/v1/completions", generate, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
        ]
    )


@contextmanager
def run_uvicorn(app: Any, tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """Serve ``app`` on a free loopback port; yields its base URL (with /v1)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="error",
        lifespan="off",
        ssl_certfile=str(tls[0]) if tls else None,
        ssl_keyfile=str(tls[1]) if tls else None,
    )
    server = uvicorn.Server(config)
    started = threading.Event()
    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets=sockets)
        started.set()

    server.startup = startup  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert started.wait(30), "the fake server did not start"
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def fake_server(key: str | None = None, tls: tuple[Path, Path] | None = None) -> Iterator[Fake]:
    """A running fake OpenAI server (HTTPS with ``tls``: certificate and key PEM files)."""
    fake = Fake(key=key)
    with run_uvicorn(build_app(fake), tls) as url:
        fake.url = url
        yield fake


@dataclass
class Proxy:
    """A CONNECT proxy on loopback; counts tunnels, or refuses them all."""

    url: str = ""
    tunnels: list[str] = field(default_factory=list)
    refuse: bool = False


@contextmanager
def connect_proxy(refuse: bool = False) -> Iterator[Proxy]:
    """An HTTP CONNECT proxy written for the test (one thread per tunnel)."""
    proxy = Proxy(refuse=refuse)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    proxy.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop = threading.Event()

    def pump(client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                data = client.recv(4096)
                if not data:
                    return
                head += data
            line = head.split(b"\r\n", 1)[0].decode()
            method, target, _ = line.split(" ", 2)
            if method != "CONNECT" or proxy.refuse:
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            proxy.tunnels.append(target)
            host, port = target.rsplit(":", 1)
            with socket.create_connection((host, int(port))) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                pair = [client, upstream]
                while not stop.is_set():
                    ready, _, _ = select.select(pair, [], [], 0.2)
                    for sock in ready:
                        try:
                            data = sock.recv(65536)
                            if data:
                                (upstream if sock is client else client).sendall(data)
                        except OSError:  # either side hung up hard: the tunnel is over
                            data = b""
                        if not data:
                            return

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=pump, args=(client,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        listener.close()
        thread.join(5)
