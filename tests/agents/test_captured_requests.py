"""Real agents' own requests, byte for byte as captured, get answers from a real server.

``tests/fixtures/agent_requests/`` holds what Codex CLI, Claude Code, opencode, aider and
the Continue CLI sent (``tests/agents/capture.py``): every field, tool type and header
they send, only the model name is swapped for the one served here. Each request goes to
the route its client used and must be answered 200, with a stream that ends the way its
protocol ends — what a developer needs for the client's first turn (and, for the
multi-request captures, the turn after a tool ran) to work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agents.clients import Serving

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_requests"
# Headers a client sets about its own connection, not about the request.
CONNECTION_HEADERS = {
    "host",
    "content-length",
    "connection",
    "accept-encoding",
    "authorization",
    "x-api-key",
}
# The event that closes a stream of each protocol.
STREAM_END = {
    "/v1/responses": ("response.completed", "response.incomplete"),
    "/v1/messages": ("message_stop",),
    "/v1/chat/completions": ("[DONE]",),
}
ERROR_EVENTS = ("error", "response.failed")


# The two biggest last, so their prompts are still cached when test_real_agents.py runs.
ORDER = ["aider-chat", "continue-chat", "opencode-chat", "claude-code-messages", "codex-responses"]


def captured() -> list[Any]:
    """One case per request of every fixture file: (file, index)."""
    cases = []
    paths = sorted(
        FIXTURES.glob("*.json"),
        key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else -1, p.stem),
    )
    for path in paths:
        fixture = json.loads(path.read_text(encoding="utf-8"))
        for index in range(len(fixture["requests"])):
            cases.append(pytest.param(path.name, index, id=f"{path.stem}[{index}]"))
    return cases


def _events(text: str) -> list[str]:
    """Each SSE event's name (or, for chat completions, ``[DONE]``/``data``)."""
    names = []
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        named = [line[6:].strip() for line in lines if line.startswith("event:")]
        data = [line[5:].strip() for line in lines if line.startswith("data:")]
        if named:
            names.append(named[0])
        elif data:
            payload = data[0]
            if payload == "[DONE]":
                names.append("[DONE]")
            else:
                names.append("error" if '"error"' in payload[:20] else "data")
    return names


@pytest.mark.parametrize(("name", "index"), captured())
def test_captured_request_is_answered(served: Serving, name: str, index: int) -> None:
    fixture = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    body = {**fixture["requests"][index], "model": served.model}
    route = fixture["route"]
    headers = {k: v for k, v in fixture["headers"].items() if k.lower() not in CONNECTION_HEADERS}
    headers["Authorization"] = f"Bearer {served.key}"
    with httpx.Client(base_url=served.root, timeout=300) as http:
        reply = http.post(route, json=body, headers=headers)
    assert reply.status_code == 200, f"{fixture['client']} {route}: {reply.text[:500]}"
    if body.get("stream"):
        events = _events(reply.text)
        assert not set(events) & set(ERROR_EVENTS), reply.text[-1000:]
        assert events and events[-1] in STREAM_END[route], events[-5:]
    else:
        assert "error" not in reply.json()
