"""Ollama's /api/ps: a loaded model's size and context, read from its load report."""

from __future__ import annotations

import httpx

from tests.server.conftest import Served


def test_ps_lists_the_loaded_model_with_its_size_and_context(server: Served) -> None:
    auth = {"Authorization": f"Bearer {server.key}"}
    loaded = httpx.post(
        f"{server.url}/chat/completions",
        headers=auth,
        timeout=60,
        json={
            "model": "tiny-chat",
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "hi"}],
        },
    )
    assert loaded.status_code == 200, loaded.text
    running = httpx.get(f"{server.root}/api/ps", headers=auth, timeout=30).json()["models"]
    tiny = next(m for m in running if m["name"] == "tiny-chat")
    report = next(m.report for m in server.scheduler.loaded() if m.model_id == "tiny-chat")
    assert tiny["size"] == report.estimated_bytes > 0
    assert tiny["context_length"] == report.context_length > 0
    assert tiny["size_vram"] == (report.estimated_bytes if report.gpu_layers else 0)
