"""Usage of the API, end to end: a real server, the real ``openai`` client with two keys,
a refused request and a remote model; ``edgedesk stats --json`` (another process, while
the server runs) counts what was sent; nothing under EDGEDESK_HOME holds the prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.policy._sources import MachinePolicy
from desktop.remote import keyring_set
from desktop.root.context import AppContext, build_context
from desktop.server._runner import ServerRunner
from tests.cli.test_private_home import Decoder
from tests.conftest import wait_until
from tests.remote.fake_openai import Fake

WORD = "zanzibarquokka"
PROMPT = f"My locker code hint is {WORD}; say ok."


@contextmanager
def _serving(
    home: Path, models: list[Path], fake: Fake, policy: MachinePolicy | None = None
) -> Iterator[tuple[AppContext, ServerRunner]]:
    ctx = build_context(
        environ={"EDGEDESK_HOME": str(home)},
        policy=policy or MachinePolicy(),
        # The disk prompt cache keeps prompts as token ids by design (docs/privacy.md);
        # off here, so that the scan below is about what usage recording writes.
        # Plaintext (the keyring here is this process's alone, and `stats` runs in
        # another): the scan then reads the database's pages as they are.
        cli_settings={"engine.prompt_cache_disk_mb": 0, "encrypt_at_rest": False},
    )
    ctx.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    runner = ctx.new_api_server(
        settings=ServerSettings().model_copy(update={"port": 0}), model_paths=models
    )
    runner.start()
    try:
        yield ctx, runner
    finally:
        runner.stop()
        ctx.close()


def _stats(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EDGEDESK_HOME": str(home), "EDGEDESK_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "desktop", "stats", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _send(runner: ServerRunner, ctx: AppContext) -> dict[str, Any]:
    """A scripted session: what each key sent and how it ended."""
    keys = ctx.key_store
    ide = keys.create("ide")
    notebook = keys.create("notebook", endpoints=["embeddings"])
    with (
        openai.OpenAI(base_url=runner.url, api_key=ide, max_retries=0, timeout=60) as a,
        openai.OpenAI(base_url=runner.url, api_key=notebook, max_retries=0, timeout=60) as b,
    ):
        models = [m.id for m in a.models.list().data]
        chat = next(m for m in models if "llama" in m.lower() or "chat" in m.lower())
        embed = next(m for m in models if "bert" in m.lower() or "embed" in m.lower())
        for _ in range(2):
            a.chat.completions.create(
                model=chat, messages=[{"role": "user", "content": PROMPT}], max_tokens=4
            )
        stream = a.chat.completions.create(
            model=chat,
            messages=[{"role": "user", "content": PROMPT}],
            max_tokens=4,
            stream=True,
        )
        assert list(stream)
        a.chat.completions.create(
            model="gpu/echo", messages=[{"role": "user", "content": PROMPT}], max_tokens=4
        )
        b.embeddings.create(model=embed, input=[PROMPT, "second"])
        with pytest.raises(openai.PermissionDeniedError):  # out of the key's scope
            b.chat.completions.create(
                model=chat, messages=[{"role": "user", "content": PROMPT}], max_tokens=4
            )
        with pytest.raises(openai.NotFoundError):
            a.chat.completions.create(
                model="no-such-model", messages=[{"role": "user", "content": PROMPT}]
            )
    # Ollama's wire too, with curl's User-Agent.
    answer = httpx.post(
        runner.url.removesuffix("/v1") + "/api/chat",
        json={
            "model": chat,
            "messages": [{"role": "user", "content": PROMPT}],
            "stream": False,
            "options": {"num_predict": 4},
        },
        headers={"Authorization": f"Bearer {ide}", "User-Agent": "curl/8.5.0"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    root = runner.url.removesuffix("/v1")
    # Rerank (the notebook's embeddings scope) and EdgeDesk's own /mcp (ide: any scope).
    ranked = httpx.post(
        f"{runner.url}/rerank",
        json={"model": "tiny-reranker", "query": PROMPT, "documents": ["a", "b"]},
        headers={"Authorization": f"Bearer {notebook}"},
        timeout=60,
    )
    assert ranked.status_code == 200, ranked.text
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "usage-test", "version": "1"},
        },
    }
    opened = httpx.post(
        f"{root}/mcp",
        json=hello,
        headers={
            "Authorization": f"Bearer {ide}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=60,
    )
    assert opened.status_code == 200, opened.text
    return {"chat": chat, "embed": embed}


def test_stats_count_what_two_keys_sent_and_no_file_holds_the_prompt(
    tmp_path: Path, tiny_chat: Path, tiny_embed: Path, tiny_reranker: Path, fake: Fake
) -> None:
    home = tmp_path / "home"
    with _serving(home, [tiny_chat, tiny_embed, tiny_reranker], fake) as (ctx, runner):
        names = _send(runner, ctx)
        # A streamed answer's (or /mcp's) row is queued when the server's side of the
        # response ends, which may come just after the client has read it all.
        wait_until(
            lambda: ctx.usage_recorder.flush() and ctx.usage_store.count()[0] == 11,
            what="the 11 requests' rows",
        )
        routes = {g.name: g.requests for g in ctx.usage_store.summary(0, by="route")}
        # While the server still runs: `stats` in another process reads the WAL database.
        by_key = _stats(home, "--since", "24h", "--by", "key", "--json")
        by_model = _stats(home, "--since", "24h", "--by", "model", "--json")
        by_client = _stats(home, "--by", "client", "--json")
        table = _stats(home, "--by", "model")
        as_csv = _stats(home, "--csv", "--by", "key")
    assert by_key.returncode == 0, by_key.stderr
    doc = json.loads(by_key.stdout)
    keys = {g["name"]: g for g in doc["groups"]}
    # ide: models list, 2 chats, 1 streamed, 1 remote, 1 unknown model, 1 Ollama chat, /mcp.
    assert keys["ide"]["requests"] == 8
    assert keys["ide"]["errors_by_kind"] == {"model_not_found": 1}
    # notebook: 1 embedding, 1 refused chat (its scope is embeddings), 1 rerank.
    assert keys["notebook"]["requests"] == 3
    assert keys["notebook"]["errors_by_kind"] == {"key_scope": 1}
    assert doc["requests"] == 11 and doc["errors"] == 2
    assert routes == {
        "/v1/models": 1,
        "/v1/chat/completions": 6,
        "/v1/embeddings": 1,
        "/v1/rerank": 1,
        "/api/chat": 1,
        "/mcp": 1,
    }
    assert keys["ide"]["completion_tokens"] > 0 and keys["ide"]["prompt_tokens"] > 0
    assert keys["ide"]["ttft_ms"]["p50"] is not None  # the streamed and whole chats
    assert keys["ide"]["tokens_per_s"] is not None

    models = {g["name"]: g for g in json.loads(by_model.stdout)["groups"]}
    assert models[names["chat"]]["requests"] == 4  # 2 whole, 1 streamed, 1 Ollama
    assert models["gpu/echo"]["requests"] == 1 and models["gpu/echo"]["errors"] == 0
    assert models[names["embed"]]["requests"] == 1
    assert models[names["embed"]]["prompt_tokens"] > 0
    assert models["tiny-reranker"]["requests"] == 1
    clients = {g["name"]: g["requests"] for g in json.loads(by_client.stdout)["groups"]}
    assert clients == {"openai-python": 8, "curl": 1, "httpx": 2}

    assert table.returncode == 0 and "gpu/echo" in table.stdout and "p50" in table.stdout
    lines = as_csv.stdout.splitlines()
    assert lines[0].startswith("group,requests,errors,errors_by_kind")
    assert any(line.startswith("ide,8,1,model_not_found=1") for line in lines)

    # Nothing under EDGEDESK_HOME holds the prompt, as text or as the model's token ids.
    assert Decoder(tiny_chat).readable(home, WORD) == []


def test_policy_off_records_no_usage(
    tmp_path: Path, tiny_chat: Path, tiny_embed: Path, tiny_reranker: Path, fake: Fake
) -> None:
    home = tmp_path / "home"
    policy = MachinePolicy(origin="test", values={"CollectUsage": False})
    with _serving(home, [tiny_chat, tiny_embed, tiny_reranker], fake, policy) as (ctx, runner):
        _send(runner, ctx)
        assert runner.services.usage is None
        assert ctx.usage_store.count() == (0, 0)
        assert ctx.effective.is_locked("collect_usage")


def test_stats_says_when_collection_is_off(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text("collect_usage = false\n")
    shown = _stats(home)
    assert shown.returncode == 0, shown.stderr
    assert "usage collection is off" in shown.stdout
    assert json.loads(_stats(home, "--json").stdout)["collecting"] is False
