"""`edgedesk serve` stopped with SIGTERM keeps its conversations: the next start resumes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx

from tests.fixtures.children import edgedesk_serving

SYSTEM = "You are a careful coding agent; read every file before you edit it. " * 12


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "EDGEDESK_HOME": str(home), "EDGEDESK_OFFLINE": "1"}


def _ask(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"model": "tiny-chat", "messages": messages, "max_tokens": 4, "temperature": 0}
    response = httpx.post(f"{url}/chat/completions", json=body, timeout=120)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_restarted_server_resumes_the_session_from_its_disk_cache(
    tiny_chat: Path, tmp_path: Path
) -> None:
    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hello"}]
    with edgedesk_serving(tiny_chat, _env(tmp_path / "home"), start_s=120) as url:
        one = _ask(url, first)
    assert list((tmp_path / "home" / "cache" / "prompt-cache").rglob("*.kv"))
    answer = one["choices"][0]["message"]["content"]
    nxt = [
        *first,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "and then?"},
    ]
    with edgedesk_serving(tiny_chat, _env(tmp_path / "home"), start_s=120) as url:
        two = _ask(url, nxt)
    cached = two["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= one["usage"]["prompt_tokens"] - 1
