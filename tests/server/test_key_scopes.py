"""Scoped API keys on a real server: models, endpoints, expiry (a fake clock), rate, policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from desktop.base.audit import AuditLog
from desktop.base.config import ServerSettings
from desktop.base.errors import InvalidRequest
from desktop.root.context import AppContext, build_context
from desktop.server._asgi import services_for
from desktop.server._metrics import AccessRecord
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner
from desktop.server._security import DAY_S, KeyNotFound, KeyStore, endpoint_of

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Scoped:
    ctx: AppContext
    runner: ServerRunner
    keys: KeyStore
    clock: Clock


@pytest.fixture(scope="module")
def scoped(
    tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path, tiny_embed: Path
) -> Iterator[Scoped]:
    home = tmp_path_factory.mktemp("scoped")
    ctx = build_context(environ={"EDGEDESK_HOME": str(home)})
    for path in (tiny_chat, tiny_embed):
        ctx.resolver.register(path)
    clock = Clock()
    keys = KeyStore(home / "api_keys.json", clock=clock)
    runner = ServerRunner(
        services_for(
            ctx.scheduler,
            ResolverDirectory(ctx.resolver),
            ServerSettings().model_copy(update={"port": 0}),
            keys,
            audit=AuditLog(home / "audit"),
        )
    )
    runner.start()
    try:
        yield Scoped(ctx, runner, keys, clock)
    finally:
        runner.stop()
        ctx.close()


def _get(s: Scoped, key: str, path: str = "/models") -> httpx.Response:
    return httpx.get(s.runner.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def _post(s: Scoped, key: str, path: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(
        s.runner.url + path, json=body, timeout=60, headers={"Authorization": f"Bearer {key}"}
    )


def test_a_key_scoped_to_model_a_and_chat_gets_403_elsewhere(scoped: Scoped) -> None:
    key = scoped.keys.create("ide", models=["tiny-chat"], endpoints=["chat"])
    with openai.OpenAI(
        base_url=scoped.runner.url, api_key=key, max_retries=0, timeout=60
    ) as client:
        reply = client.chat.completions.create(
            model="tiny-chat", max_tokens=2, messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message is not None
        with pytest.raises(openai.PermissionDeniedError) as other_model:
            client.chat.completions.create(
                model="tiny-embed", max_tokens=2, messages=[{"role": "user", "content": "hi"}]
            )
        assert other_model.value.status_code == 403
        assert other_model.value.code == "model_not_allowed"
        assert "may use: tiny-chat" in other_model.value.message
        with pytest.raises(openai.PermissionDeniedError) as embeddings:
            client.embeddings.create(model="tiny-embed", input="hello")
        assert embeddings.value.code == "key_scope"
        assert [m.id for m in client.models.list()]  # listing needs no endpoint scope
    ollama_embed = httpx.post(
        scoped.runner.url.removesuffix("/v1") + "/api/embed",
        json={"model": "tiny-embed", "input": "x"},
        timeout=60,
        headers={"Authorization": f"Bearer {key}"},
    )
    assert ollama_embed.status_code == 403  # the same scope on every protocol

    embed_only = scoped.keys.create("indexer", endpoints=["embeddings"])
    assert (
        _post(
            scoped, embed_only, "/embeddings", {"model": "tiny-embed", "input": "hello"}
        ).status_code
        == 200
    )
    refused = _post(
        scoped,
        embed_only,
        "/chat/completions",
        {"model": "tiny-chat", "messages": [{"role": "user", "content": "x"}]},
    )
    assert refused.status_code == 403 and refused.json()["error"]["type"] == "permission_error"


def test_a_scoped_key_lists_only_its_models_and_no_chat_template(scoped: Scoped) -> None:
    """As OpenAI's project keys: a key for one model lists that model only, in
    ``/v1/models``, ``/api/tags`` and ``/metrics``; an embeddings-only key gets no chat
    template from ``/api/show``."""
    root = scoped.runner.url.removesuffix("/v1")
    everything = scoped.keys.create("lists-all")
    one = scoped.keys.create("lists-one", models=["tiny-embed"])
    assert _post(
        scoped, everything, "/embeddings", {"model": "tiny-embed", "input": "x"}
    ).is_success
    chatted = _post(
        scoped,
        everything,
        "/chat/completions",
        {"model": "tiny-chat", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]},
    )
    assert chatted.is_success  # both models are loaded now, so /metrics names both

    def listed(key: str) -> tuple[set[str], set[str], str]:
        models = {m["id"] for m in _get(scoped, key).json()["data"]}
        tags = {
            m["name"] for m in httpx.get(root + "/api/tags", headers=_auth(key)).json()["models"]
        }
        metrics = httpx.get(root + "/metrics", headers=_auth(key)).text
        return models, tags, metrics

    models, tags, metrics = listed(everything)
    assert {"tiny-chat", "tiny-embed"} <= models and {"tiny-chat", "tiny-embed"} <= tags
    assert 'model="tiny-chat"' in metrics
    models, tags, metrics = listed(one)
    assert models == {"tiny-embed"} and tags == {"tiny-embed"}
    assert 'model="tiny-chat"' not in metrics and 'model="tiny-embed"' in metrics
    metrics_json = httpx.get(root + "/metrics?format=json", headers=_auth(one)).json()
    assert "tiny-chat" not in json.dumps(metrics_json)

    embed_only = scoped.keys.create("embeds-only", endpoints=["embeddings"])
    for key, template in ((everything, True), (embed_only, False)):
        shown = httpx.post(root + "/api/show", json={"model": "tiny-chat"}, headers=_auth(key))
        assert shown.status_code == 200
        assert bool(shown.json()["template"]) is template
        assert shown.json()["capabilities"]  # the model's facts stay readable


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_key_expires_on_time(scoped: Scoped) -> None:
    key = scoped.keys.create("contractor", expires_in_s=DAY_S)
    assert _get(scoped, key).status_code == 200
    scoped.clock.now += DAY_S - 1
    assert _get(scoped, key).status_code == 200
    scoped.clock.now += 1
    expired = _get(scoped, key)
    assert expired.status_code == 401
    assert expired.json()["error"]["code"] == "expired_api_key"


def test_a_key_over_its_rate_gets_429_with_retry_after(scoped: Scoped) -> None:
    key = scoped.keys.create("script", rate_per_min=2)
    other = scoped.keys.create("script-2")
    assert [_get(scoped, key).status_code for _ in range(2)] == [200, 200]
    limited = _get(scoped, key)
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert 1 <= int(limited.headers["Retry-After"]) <= 61
    assert _get(scoped, other).status_code == 200  # another key is not slowed


def test_keys_list_shows_scopes_and_last_use(scoped: Scoped) -> None:
    used = scoped.keys.create("reader", read_only_docs="handbook")
    scoped.keys.create("idle", models=["tiny-chat"], rate_per_min=5)
    assert _get(scoped, used).status_code == 200
    infos = {i.name: i for i in scoped.keys.list()}
    assert infos["reader"].last_used is not None and infos["idle"].last_used is None
    assert infos["reader"].scope.endpoints == ("documents",)
    assert "reads documents of handbook" in infos["reader"].scope.describe()
    assert infos["idle"].scope.describe() == "models tiny-chat; 5/min"
    # Reading the collection only: indexing (POST) is out of scope.
    assert infos["reader"].scope.allows_endpoint("/v1/collections/handbook", "GET")
    assert not infos["reader"].scope.allows_endpoint("/v1/collections/handbook", "POST")
    assert not infos["reader"].scope.allows_endpoint("/v1/chat/completions", "POST")
    assert endpoint_of("/v1/models") is None and endpoint_of("/api/chat") == "chat"


def test_policy_caps_every_keys_lifetime(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "api_keys.json"
    old = KeyStore(path, clock=clock).create("old")  # made before the policy, no expiry
    capped = KeyStore(path, clock=clock, max_lifetime_days=30)
    with pytest.raises(InvalidRequest, match="MaxKeyLifetimeDays"):
        capped.create("long", expires_in_s=60 * DAY_S)
    new = capped.create("new")
    [info] = [i for i in capped.list() if i.name == "new"]
    assert info.scope.expires == clock.now + 30 * DAY_S
    assert capped.check(old).expired is False  # type: ignore[union-attr]
    clock.now += 30 * DAY_S
    assert capped.check(old).expired and capped.check(new).expired  # type: ignore[union-attr]


def test_a_keys_scope_changes_in_place_and_is_audited(tmp_path: Path) -> None:
    clock = Clock()
    audit = AuditLog(tmp_path / "audit")
    keys = KeyStore(tmp_path / "keys.json", clock=clock, audit=audit)
    key = keys.create("ide", models=["a"], endpoints=["chat"], rate_per_min=10)
    scope = keys.set_scope("ide", endpoints=["embeddings"], expires_in_s=2 * DAY_S)
    assert scope.models is None and scope.endpoints == ("embeddings",)
    assert scope.rate_per_min is None and scope.expires == clock.now + 2 * DAY_S
    found = keys.check(key)  # the same secret, the new scope
    assert found is not None and found.scope == scope
    with pytest.raises(InvalidRequest):
        keys.set_scope("ide", endpoints=["images"])
    with pytest.raises(KeyNotFound):
        keys.set_scope("nobody", models=["a"])
    assert keys.check(key) == found  # a refused change leaves the key as it was
    events = audit.entries()
    assert [(e["event"], e["key"]) for e in events] == [
        ("key.created", "ide"),
        ("key.scope_changed", "ide"),
    ]
    assert events[1]["scope"].startswith("endpoints embeddings; expires ")
    assert audit.verify().ok
    capped = KeyStore(tmp_path / "keys.json", clock=clock, max_lifetime_days=7)
    with pytest.raises(InvalidRequest, match="MaxKeyLifetimeDays"):
        capped.set_scope("ide", expires_in_s=30 * DAY_S)


def test_keys_create_and_list_on_the_command_line() -> None:
    def edgedesk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "desktop", "keys", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=os.environ,
        )

    made = edgedesk(
        "create",
        "vscode",
        "--models",
        "qwen,glm",
        "--expires",
        "30d",
        "--rate",
        "60/min",
        "--endpoints",
        "chat",
    )
    assert made.returncode == 0 and made.stdout.startswith("edk-"), made.stderr
    bad = edgedesk("create", "x", "--rate", "fast")
    assert bad.returncode == 2 and "N/min" in bad.stderr
    listed = edgedesk("list", "--json")
    [info] = json.loads(listed.stdout)
    assert (
        info["name"],
        info["models"],
        info["endpoints"],
        info["rate_per_min"],
        info["last_used"],
    ) == ("vscode", ["qwen", "glm"], ["chat"], 60, None)
    text = edgedesk("list").stdout
    assert "models qwen,glm" in text and "60/min" in text and "last used never" in text


def test_every_api_call_is_in_the_audit_log_without_its_content(scoped: Scoped) -> None:
    key = scoped.keys.create("auditor-check", models=["tiny-chat"])
    logged: list[str] = []
    both = threading.Event()

    def seen(record: AccessRecord) -> None:  # the audit line is written before this call
        if record.key_name == "auditor-check":
            logged.append(record.request_id)
            if len(logged) == 2:
                both.set()

    unsubscribe = scoped.runner.subscribe(seen)
    reply = _post(
        scoped,
        key,
        "/chat/completions",
        {
            "model": "tiny-chat",
            "max_tokens": 2,
            "messages": [{"role": "user", "content": "okapi-secret-word"}],
        },
    )
    assert reply.status_code == 200
    refused = _post(
        scoped,
        key,
        "/chat/completions",
        {"model": "tiny-embed", "messages": [{"role": "user", "content": "x"}]},
    )
    assert refused.status_code == 403
    assert both.wait(30)
    unsubscribe()
    audit = scoped.runner.app.state.services.audit
    assert isinstance(audit, AuditLog)
    calls = [e for e in audit.entries() if e.get("key") == "auditor-check"]
    assert [(c["event"], c["endpoint"], c["model"], c["status"]) for c in calls] == [
        ("api.call", "/v1/chat/completions", "tiny-chat", 200),
        ("api.call", "/v1/chat/completions", "tiny-embed", 403),
    ]
    assert calls[0]["tokens_in"] > 0 and calls[0]["tokens_out"] > 0
    assert calls[0]["request_id"] == reply.headers["x-request-id"]
    assert all(b"okapi-secret-word" not in f.read_bytes() for f in audit.files())
    assert audit.verify().ok
