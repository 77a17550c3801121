"""A recording stand-in for a model server: saves each request an agent client sends.

Run ``python -m tests.agents.capture OUT_DIR [PORT]``; point a client at
``http://127.0.0.1:PORT`` (``/v1`` for OpenAI clients). Every request's method, path,
headers (the key masked) and JSON body go to ``OUT_DIR/NNN-route.json``, and the client
gets the smallest valid answer of its protocol (streamed when it asked for a stream), so
it goes on to its next request. How ``tests/fixtures/agent_requests/`` was made.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ANSWER = "Hello from the capture server."
# With CAPTURE_TOOL=1 the first turn of a request that offers tools is answered with a
# call of the client's shell tool (``echo hi``), so its next request carries a tool result.
CALL_TOOL = os.environ.get("CAPTURE_TOOL") == "1"
SHELL_TOOLS = ("exec_command", "shell", "Bash", "bash")
_COUNTER = itertools.count(1)
_LOCK = threading.Lock()
SECRET_HEADERS = {"authorization", "x-api-key"}


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def _shell_tool(tools: Any, done: bool) -> str | None:
    """The name of the shell tool to call, when this request should get a call."""
    if not CALL_TOOL or done or not isinstance(tools, list):
        return None
    names = {t.get("name") or t.get("function", {}).get("name") for t in tools}
    return next((name for name in SHELL_TOOLS if name in names), None)


def responses_answer(body: dict[str, Any]) -> tuple[bytes, str]:
    """A Responses API answer: SSE events when streamed, else the response object."""
    done = any(
        isinstance(i, dict) and i.get("type") == "function_call_output"
        for i in body.get("input") or []
    )
    tool = _shell_tool(body.get("tools"), done)
    item: dict[str, Any] = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
    }
    if tool:
        item = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": tool,
            "arguments": json.dumps(
                {"cmd": "echo hi"} if tool == "exec_command" else {"command": ["echo", "hi"]}
            ),
            "status": "completed",
        }
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    resp = {
        "id": "resp_1",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model", "m"),
        "output": [item],
        "usage": usage,
    }
    if not body.get("stream"):
        return json.dumps(resp).encode(), "application/json"
    started = {**resp, "status": "in_progress", "output": [], "usage": None}
    return _sse(
        [
            (
                "response.created",
                {"type": "response.created", "sequence_number": 0, "response": started},
            ),
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": 1,
                    "output_index": 0,
                    "item": {**item, "status": "in_progress"},
                },
            ),
            *(
                []
                if tool
                else [
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "sequence_number": 2,
                            "item_id": "msg_1",
                            "output_index": 0,
                            "content_index": 0,
                            "delta": ANSWER,
                        },
                    )
                ]
            ),
            (
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": 3,
                    "output_index": 0,
                    "item": item,
                },
            ),
            (
                "response.completed",
                {"type": "response.completed", "sequence_number": 4, "response": resp},
            ),
        ]
    ), "text/event-stream"


def messages_answer(body: dict[str, Any]) -> tuple[bytes, str]:
    """An Anthropic Messages answer."""
    done = any(
        isinstance(m, dict)
        and isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
        for m in body.get("messages") or []
    )
    tool = _shell_tool(body.get("tools"), done)
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    block: dict[str, Any] = {"type": "text", "text": ANSWER}
    stop = "end_turn"
    if tool:
        block = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": tool,
            "input": {"command": "echo hi", "description": "Print hi"},
        }
        stop = "tool_use"
    msg = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return json.dumps(msg).encode(), "application/json"
    delta = (
        {"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}
        if tool
        else {"type": "text_delta", "text": ANSWER}
    )
    return _sse(
        [
            (
                "message_start",
                {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None}},
            ),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {**block, "input": {}}
                    if tool
                    else {"type": "text", "text": ""},
                },
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    ), "text/event-stream"


def chat_answer(body: dict[str, Any]) -> tuple[bytes, str]:
    """A chat completions answer."""
    base = {"id": "chatcmpl-1", "created": int(time.time()), "model": body.get("model", "m")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    done = any(isinstance(m, dict) and m.get("role") == "tool" for m in body.get("messages") or [])
    tool = _shell_tool(body.get("tools"), done)
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
    finish = "stop"
    if tool:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": tool,
                        "arguments": json.dumps({"command": "echo hi", "description": "Print hi"}),
                    },
                }
            ],
        }
        finish = "tool_calls"
    if not body.get("stream"):
        return json.dumps(
            {
                **base,
                "object": "chat.completion",
                "usage": usage,
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            }
        ).encode(), "application/json"
    chunk = {**base, "object": "chat.completion.chunk"}
    return _sse(
        [
            (None, {**chunk, "choices": [{"index": 0, "finish_reason": None, "delta": message}]}),
            (None, {**chunk, "choices": [{"index": 0, "finish_reason": finish, "delta": {}}]}),
            (None, {**chunk, "choices": [], "usage": usage}),
            (None, "[DONE]"),
        ]
    ), "text/event-stream"


def ollama_answer(path: str, body: dict[str, Any]) -> tuple[bytes, str]:
    """Ollama's discovery routes (what ``codex --oss`` asks before its first turn)."""
    if path == "/api/version":
        return json.dumps({"version": "0.13.5"}).encode(), "application/json"
    model = {
        "name": "m:latest",
        "model": "m:latest",
        "size": 1,
        "digest": "0",
        "details": {"family": "gemma3", "parameter_size": "270M"},
    }
    if path == "/api/tags":
        return json.dumps({"models": [model]}).encode(), "application/json"
    if path == "/api/show":
        return json.dumps(
            {
                "details": model["details"],
                "capabilities": ["completion"],
                "model_info": {"gemma3.context_length": 32768},
            }
        ).encode(), "application/json"
    return json.dumps({"error": "not captured"}).encode(), "application/json"


class Recorder(BaseHTTPRequestHandler):
    """Saves each request under the server's ``out`` folder and answers it."""

    out: Path

    def _record(self, body: Any) -> None:
        headers = {
            k: ("***" if k.lower() in SECRET_HEADERS else v) for k, v in self.headers.items()
        }
        with _LOCK:
            n = next(_COUNTER)
        name = self.path.split("?")[0].strip("/").replace("/", "_") or "root"
        (self.out / f"{n:03d}-{name}.json").write_text(
            json.dumps(
                {"method": self.command, "path": self.path, "headers": headers, "body": body},
                indent=1,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )

    def _reply(self, data: bytes, ctype: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        """Model lists and Ollama's discovery."""
        self._record(None)
        path = self.path.split("?")[0]
        if path.startswith("/api/"):
            self._reply(*ollama_answer(path, {}))
        elif path.endswith("/models"):
            self._reply(
                json.dumps(
                    {
                        "object": "list",
                        "data": [{"id": "m", "object": "model", "owned_by": "capture"}],
                        "models": [{"slug": "m"}],
                    }
                ).encode(),
                "application/json",
            )
        else:
            self._reply(b'{"error": "not found"}', "application/json", 404)

    def do_POST(self) -> None:
        """Every API route: record, then answer in the route's shape."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = {"__raw__": raw.decode("utf-8", "replace")}
        self._record(body)
        path = self.path.split("?")[0]
        body = body if isinstance(body, dict) else {}
        if path.endswith("/responses"):
            self._reply(*responses_answer(body))
        elif path.endswith("/messages/count_tokens"):
            self._reply(b'{"input_tokens": 10}', "application/json")
        elif path.endswith("/messages"):
            self._reply(*messages_answer(body))
        elif path.endswith("/chat/completions"):
            self._reply(*chat_answer(body))
        elif path.startswith("/api/"):
            self._reply(*ollama_answer(path, body))
        else:
            self._reply(b'{"error": "not found"}', "application/json", 404)

    def log_message(self, format: str, *args: Any) -> None:
        """One line per request on stderr."""
        sys.stderr.write(f"capture: {format % args}\n")


def main() -> None:
    """Serve until killed."""
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    Recorder.out = out
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Recorder)
    print(f"capture: http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
