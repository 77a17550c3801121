"""The Responses, Anthropic and Ollama routes share the queue, limits, logs and cancel path."""

from __future__ import annotations

import inspect
import threading
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from tests.conftest import wait_until
from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello world"}]


def _auth(srv: Served) -> dict[str, str]:
    return {"Authorization": f"Bearer {srv.key}"}


def _one_slot() -> dict[str, int]:
    """One request at a time per model, where the engine can run several (slots)."""
    return {"parallel": 1} if "parallel" in inspect.signature(serve).parameters else {}


def test_a_full_queue_is_429_with_retry_after_in_each_shape(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "q", [tiny_chat], delay_s=0.02, queue_max=1, **_one_slot()) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key=srv.key, max_retries=0, timeout=60)
        done: list[int] = []

        def ask(tokens: int) -> None:
            reply = client.chat.completions.create(
                model="tiny-chat", messages=HI, max_tokens=tokens
            )
            done.append(reply.usage.completion_tokens)

        running = threading.Thread(target=ask, args=(40,))
        running.start()
        wait_until(lambda: srv.scheduler.busy, 20, "the engine busy")
        waiting = threading.Thread(target=ask, args=(2,))
        waiting.start()
        wait_until(lambda: srv.scheduler.queue_depth == 1, 20, "one request queued")
        with pytest.raises(openai.RateLimitError) as full:
            client.responses.create(model="tiny-chat", input="hi", max_output_tokens=2)
        assert int(full.value.response.headers["retry-after"]) >= 1
        with (
            anthropic.Anthropic(base_url=srv.root, api_key=srv.key, max_retries=0) as claude,
            pytest.raises(anthropic.RateLimitError) as busy,
        ):
            claude.messages.create(model="tiny-chat", max_tokens=2, messages=HI)
        assert busy.value.body["error"]["type"] == "rate_limit_error"
        reply = httpx.post(
            f"{srv.root}/api/chat", headers=_auth(srv), json={"model": "tiny-chat", "messages": HI}
        )
        assert reply.status_code == 429 and int(reply.headers["retry-after"]) >= 1
        assert set(reply.json()) == {"error"}
        running.join(30)
        waiting.join(30)
        assert sorted(done) == [2, 40]  # the queued requests were not disturbed


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/messages", {"max_tokens": 1000, "messages": HI}),
        ("/v1/responses", {"max_output_tokens": 1000, "input": "hi"}),
        ("/api/chat", {"options": {"num_predict": 1000}, "messages": HI}),
    ],
)
def test_a_client_leaving_mid_stream_stops_generation(
    tmp_path: Path, tiny_chat, path: str, body: dict[str, object]
) -> None:
    with serve(tmp_path / "dc", [tiny_chat], delay_s=0.02, **_one_slot()) as srv:
        with httpx.stream(
            "POST",
            srv.root + path,
            headers=_auth(srv),
            timeout=30,
            json={"model": "tiny-chat", "stream": True, **body},
        ) as response:
            lines = response.iter_lines()
            for _ in range(6):
                next(lines)
        wait_until(lambda: not srv.scheduler.busy, 30, "the engine idle again")
        assert srv.journal.count("chunk") < 100  # far from the 1000 asked for


def test_metrics_access_log_and_rate_limits_cover_every_protocol(tmp_path: Path, tiny_chat) -> None:
    secret = "purple elephants"
    with serve(tmp_path / "m", [tiny_chat], requests_per_minute=4) as srv:  # 3 calls + metrics
        calls = [
            ("/v1/responses", {"input": secret, "max_output_tokens": 2}),
            ("/v1/messages", {"messages": [{"role": "user", "content": secret}], "max_tokens": 2}),
            (
                "/api/chat",
                {
                    "messages": [{"role": "user", "content": secret}],
                    "stream": False,
                    "options": {"num_predict": 2},
                },
            ),
        ]
        for path, body in calls:
            reply = httpx.post(
                srv.root + path, headers=_auth(srv), json={"model": "tiny-chat", **body}
            )
            assert reply.status_code == 200, reply.text
            assert reply.headers["x-request-id"]
        metrics = httpx.get(f"{srv.root}/metrics", headers=_auth(srv)).text
        for path, _ in calls:
            assert f'edgedesk_requests_total{{route="{path}",status="200"}} 1' in metrics
        limited = httpx.get(f"{srv.root}/api/tags", headers=_auth(srv))
        assert limited.status_code == 429 and "retry-after" in limited.headers
        log = (srv.ctx.paths.log_dir / "access.log").read_text()
    assert secret not in log and srv.key not in log
    assert all(f'"route": "{path}"' in log for path, _ in calls)


def test_host_check_and_cors_hold_on_the_new_routes(
    server: Served, tmp_path: Path, tiny_chat
) -> None:
    port = server.runner.port
    evil = {**_auth(server), "Host": f"evil.example:{port}"}
    assert httpx.get(f"{server.root}/api/tags", headers=evil).json() == {
        "error": f"the Host header does not name this server; use http://127.0.0.1:{port}"
    }
    anthropic_shape = httpx.post(f"{server.root}/v1/messages", headers=evil, json={}).json()
    assert anthropic_shape["error"]["type"] == "permission_error"
    preflight = {
        "Origin": "http://ide.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key,anthropic-version,content-type",
    }
    assert (
        "access-control-allow-origin"
        not in httpx.options(f"{server.root}/v1/messages", headers=preflight).headers
    )
    with serve(tmp_path / "cors", [tiny_chat], allowed_origins=["http://ide.example"]) as srv:
        ok = httpx.options(f"{srv.root}/v1/messages", headers=preflight)
        assert ok.headers["access-control-allow-origin"] == "http://ide.example"
        allowed = ok.headers["access-control-allow-headers"].lower()
        assert "x-api-key" in allowed and "anthropic-version" in allowed
