"""Safe by default: keys, Host header, CORS, limits, error shapes, queueing, disconnects."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.base.errors import ConfigError
from desktop.server._asgi import create_app, services_for
from desktop.server._model_directory import ResolverDirectory
from desktop.server._security import KeyStore
from tests.conftest import wait_until
from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello"}]


def _auth(server: Served) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.key}"}


def _error(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"]
    assert response.headers["x-request-id"]
    return body["error"]


def test_keys_missing_wrong_and_revoked(server: Served) -> None:
    bad = openai.OpenAI(base_url=server.url, api_key="edk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()
    err = _error(httpx.get(f"{server.url}/models"), 401)
    assert err["code"] == "invalid_api_key" and "keys create" in err["message"]
    temp = server.keys.create("temp-client")
    client = openai.OpenAI(base_url=server.url, api_key=temp, max_retries=0)
    assert client.models.list().data
    server.keys.revoke("temp-client")
    with pytest.raises(openai.AuthenticationError):
        client.models.list()
    stored = (server.ctx.paths.data_dir / "api_keys.json").read_text()
    assert temp not in stored and server.key not in stored


def test_a_key_revoked_elsewhere_is_refused_on_the_next_request(server: Served) -> None:
    # 'edgedesk keys revoke' runs in another process: its own KeyStore on the same file.
    temp = server.keys.create("other-client")
    client = openai.OpenAI(base_url=server.url, api_key=temp, max_retries=0)
    assert client.models.list().data
    assert client.models.list().data  # served from the parsed copy this time
    KeyStore(server.keys.path).revoke("other-client")
    with pytest.raises(openai.AuthenticationError):
        client.models.list()


class CountingKeyStore(KeyStore):
    """A key store that counts how often it parses its file."""

    parses = 0

    def _read(self) -> dict[str, dict[str, str]]:
        self.parses += 1
        return super()._read()


def test_verify_parses_the_key_file_only_when_it_changed(tmp_path: Path) -> None:
    keys = CountingKeyStore(tmp_path / "api_keys.json")
    key = keys.create("ide")
    keys.parses = 0
    assert [keys.verify(key) for _ in range(50)] == ["ide"] * 50
    assert keys.verify("edk-wrong") is None
    assert keys.parses == 1
    other = KeyStore(keys.path).create("script")  # written by another instance
    assert keys.verify(other) == "script" and keys.parses == 2
    KeyStore(keys.path).revoke("ide")
    assert keys.verify(key) is None
    keys.path.unlink()  # a deleted file means no keys, not the last ones read
    assert keys.verify(other) is None


def test_host_header_must_name_the_server(server: Served) -> None:
    port = server.runner.port
    rebinding = httpx.get(
        f"{server.url}/models", headers={**_auth(server), "Host": f"evil.example:{port}"}
    )
    err = _error(rebinding, 403)
    assert err["code"] == "invalid_host" and f"127.0.0.1:{port}" in err["message"]
    assert (
        httpx.get(
            f"{server.url}/models", headers={**_auth(server), "Host": f"localhost:{port}"}
        ).status_code
        == 200
    )


def test_host_check_accepts_ipv6_loopback_and_the_bound_name(
    server: Served, tmp_path: Path, tiny_chat
) -> None:
    port = server.runner.port
    ipv6 = httpx.get(f"{server.url}/models", headers={**_auth(server), "Host": f"[::1]:{port}"})
    assert ipv6.status_code == 200
    # A server bound to another loopback address answers to that name, not to strangers.
    with serve(tmp_path / "bound", [tiny_chat], host="127.0.0.2") as other:
        assert other.url.startswith("http://127.0.0.2:")
        own = httpx.get(f"{other.url}/models", headers=_auth(other))
        assert own.status_code == 200 and own.request.headers["host"].startswith("127.0.0.2")
        stranger = httpx.get(
            f"{other.url}/models",
            headers={**_auth(other), "Host": f"127.0.0.3:{other.runner.port}"},
        )
        assert _error(stranger, 403)["code"] == "invalid_host"


def test_no_cors_unless_origins_are_allowed(server: Served, tmp_path: Path, tiny_chat) -> None:
    preflight = {"Origin": "http://site.example", "Access-Control-Request-Method": "POST"}
    response = httpx.options(f"{server.url}/chat/completions", headers=preflight)
    assert "access-control-allow-origin" not in response.headers
    with serve(tmp_path / "cors", [tiny_chat], allowed_origins=["http://ide.example"]) as allowed:
        ok = httpx.options(
            f"{allowed.url}/chat/completions", headers={**preflight, "Origin": "http://ide.example"}
        )
        assert ok.headers["access-control-allow-origin"] == "http://ide.example"
        assert "access-control-allow-credentials" not in ok.headers
        other = httpx.get(
            f"{allowed.url}/models", headers={**_auth(allowed), "Origin": "http://site.example"}
        )
        assert "access-control-allow-origin" not in other.headers


def test_no_auth_is_refused_off_loopback(server: Served) -> None:
    settings = ServerSettings(host="0.0.0.0", require_key=False)
    with pytest.raises(ConfigError, match="loopback"):
        create_app(
            services_for(server.scheduler, ResolverDirectory(server.ctx.resolver), settings, None)
        )


@pytest.mark.parametrize(
    "body,status,param",
    [
        ('{"model": "tiny-chat", "messages": [', 400, None),
        ('{"model": "tiny-chat", "messages": "hi"}', 400, "messages"),
        (
            '{"model": "tiny-chat", "messages": [{"role": "user", "content": "x"}], '
            '"temperature": "hot"}',
            400,
            "temperature",
        ),
        ('{"model": "tiny-chat", "messages": []}', 400, "messages"),
        ('{"model": "nope", "messages": [{"role": "user", "content": "x"}]}', 404, "model"),
        (
            '{"model": "tiny-chat", "messages": [{"role": "user", "content": "x"}], '
            '"max_tokens": 0}',
            400,
            "max_tokens",
        ),  # 100000 is lowered to the limit, 0 is wrong
        (
            '{"model": "tiny-chat", "messages": [{"role": "user", "content": "x"}], "n": 3}',
            400,
            "n",
        ),
    ],
)
def test_bad_requests_get_openai_error_shapes(server: Served, body, status, param) -> None:
    response = httpx.post(
        f"{server.url}/chat/completions",
        content=body,
        headers={**_auth(server), "Content-Type": "application/json"},
    )
    assert _error(response, status)["param"] == param


def test_openai_client_sees_typed_errors(client) -> None:
    with pytest.raises(openai.NotFoundError, match="available: tiny-chat"):
        client.chat.completions.create(model="missing", messages=HI)
    with pytest.raises(openai.BadRequestError, match="context") as err:
        client.chat.completions.create(
            model="tiny-chat", max_tokens=5, messages=[{"role": "user", "content": "cat " * 5000}]
        )
    assert err.value.body["code"] == "context_length_exceeded"
    assert "tokens" in err.value.body["message"]


def test_oversize_body_is_413(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "small", [tiny_chat], max_body_bytes=2048) as small:
        big = {"model": "tiny-chat", "messages": [{"role": "user", "content": "x" * 5000}]}
        response = httpx.post(f"{small.url}/chat/completions", json=big, headers=_auth(small))
        assert _error(response, 413)["code"] == "request_too_large"


def test_queue_is_fifo_and_full_queue_is_429(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "q", [tiny_chat], delay_s=0.02, queue_max=1, parallel=1) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key=srv.key, max_retries=0, timeout=60)
        results: dict[str, object] = {}

        def ask(name: str, tokens: int) -> None:
            results[name] = client.chat.completions.create(
                model="tiny-chat", messages=HI, max_tokens=tokens
            )

        first = threading.Thread(target=ask, args=("first", 40))
        first.start()
        wait_until(lambda: srv.scheduler.busy, 30, "the engine busy")
        second = threading.Thread(target=ask, args=("second", 3))
        second.start()
        wait_until(lambda: srv.scheduler.queue_depth == 1, 30, "one request queued")
        with pytest.raises(openai.RateLimitError) as err:
            client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=3)
        assert int(err.value.response.headers["retry-after"]) >= 1
        first.join(30)
        second.join(30)
        # The running request was not cut short by the ones that arrived after it.
        assert results["first"].usage.completion_tokens == 40  # type: ignore[attr-defined]
        assert results["second"].usage.completion_tokens == 3  # type: ignore[attr-defined]


def test_disconnect_mid_stream_frees_the_model(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "dc", [tiny_chat], delay_s=0.02, parallel=1) as srv:
        body = {"model": "tiny-chat", "messages": HI, "max_tokens": 1000, "stream": True}
        with httpx.stream(
            "POST", f"{srv.url}/chat/completions", json=body, headers=_auth(srv), timeout=30
        ) as response:
            lines = response.iter_lines()
            for _ in range(4):
                next(lines)
        wait_until(lambda: not srv.scheduler.busy, 30, "the engine idle again")
        engine = srv.scheduler._models["tiny-chat"].engine
        assert engine.produced < 100  # far from the 1000 asked for
        # The model is free: the next request is answered, not queued behind the orphan.
        client = openai.OpenAI(base_url=srv.url, api_key=srv.key, max_retries=0, timeout=60)
        reply = client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=2)
        assert reply.usage.completion_tokens == 2 and engine.produced < 100 + 2


def test_rate_limit_per_key(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "rl", [tiny_chat], requests_per_minute=2) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key=srv.key, max_retries=0)
        client.models.list()
        client.models.list()
        with pytest.raises(openai.RateLimitError) as err:
            client.models.list()
        assert err.value.body["code"] == "rate_limit_exceeded"
        # Retry-After tells the client how long until its minute has room again.
        assert 1 <= int(err.value.response.headers["retry-after"]) <= 60
        other = openai.OpenAI(base_url=srv.url, api_key=srv.keys.create("other"), max_retries=0)
        assert other.models.list().data


def test_response_cache_for_deterministic_requests(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "rc", [tiny_chat], response_cache=True) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key=srv.key, max_retries=0)
        first = client.chat.completions.create(
            model="tiny-chat", messages=HI, max_tokens=4, temperature=0
        )
        second = client.chat.completions.create(
            model="tiny-chat", messages=HI, max_tokens=4, temperature=0
        )
        assert second.choices[0].message.content == first.choices[0].message.content
        assert second.id != first.id
        metrics = httpx.get(f"{srv.root}/metrics", headers=_auth(srv)).text
        assert 'edgedesk_cache_lookups_total{cache="response",result="hit"} 1' in metrics


def test_no_auth_on_loopback(tmp_path: Path, tiny_chat) -> None:
    with serve(tmp_path / "na", [tiny_chat], require_key=False) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key="anything", max_retries=0)
        assert [m.id for m in client.models.list()] == ["tiny-chat"]


def test_error_json_is_parseable_for_unknown_route(server: Served) -> None:
    err = _error(httpx.get(f"{server.url}/nothing", headers=_auth(server)), 404)
    assert err["type"] == "invalid_request_error" and err["code"] == "not_found"
