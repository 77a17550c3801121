"""Policy over remote engines: IT's endpoints, no user remotes, ForceOffline blocks all."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from desktop.base.errors import ConfigError, InvalidRequest, ModelNotAllowed, NetworkBlocked
from desktop.base.net import read_log
from desktop.cli import main
from desktop.engine._types import ChatCall, GenerationParams, Message
from desktop.policy import MachinePolicy
from desktop.remote import keyring_set
from desktop.root.context import AppContext, build_context
from tests.remote.conftest import MemoryKeyring
from tests.remote.fake_openai import Fake


def _ask(ctx: AppContext, model: str) -> str:
    stream = ctx.scheduler.stream_chat(
        model, ChatCall.of([Message("user", "quarterly numbers")], GenerationParams(max_tokens=8))
    )
    return "".join(c.text for c in stream)


def test_it_endpoints_are_usable_and_listed(fake: Fake) -> None:
    ctx = build_context(policy=MachinePolicy("test", {"RemoteEndpoints": [f"corp={fake.url}"]}))
    keyring_set("corp", "sk-remote")
    try:
        assert [(r.name, r.source) for r in ctx.remote_registry.all()] == [("corp", "policy")]
        assert "corp/echo" in ctx.remote_model_ids()
        assert _ask(ctx, "corp/echo") == "quarterly numbers "
        with pytest.raises(InvalidRequest, match="set by your organization"):
            ctx.remote_registry.remove("corp")
    finally:
        ctx.close()


def test_allow_user_remotes_off_refuses_and_hides_user_remotes(fake: Fake) -> None:
    mine = build_context(policy=MachinePolicy())
    mine.remote_registry.add("mine", fake.url)
    mine.close()
    ctx = build_context(policy=MachinePolicy("test", {"AllowUserRemotes": False}))
    try:
        with pytest.raises(ConfigError, match="AllowUserRemotes"):
            ctx.remote_registry.add("other", fake.url)
        assert ctx.remote_registry.all() == []
        assert ctx.resolver.remote is not None and ctx.resolver.remote("mine/echo") is None
    finally:
        ctx.close()


def test_force_offline_refuses_with_zero_connections(fake: Fake, edgedesk_home: Path) -> None:
    before = len(fake.requests)
    ctx = build_context(
        policy=MachinePolicy(
            "test", {"ForceOffline": True, "RemoteEndpoints": [f"corp={fake.url}"]}
        )
    )
    try:
        assert ctx.remote_model_ids() == []
        with pytest.raises(NetworkBlocked, match="offline"):
            _ask(ctx, "corp/echo")
    finally:
        ctx.close()
    assert len(fake.requests) == before  # not one connection reached the remote
    refused = read_log(edgedesk_home / "logs" / "network.jsonl")
    assert refused and not refused[-1].allowed and refused[-1].purpose == "remote engine"


def test_offline_flag_blocks_remotes_test(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-remote\n"))
    assert main(["remotes", "add", "gpu", fake.url, "--api-key-stdin"]) == 0
    before = len(fake.requests)
    assert main(["--offline", "remotes", "test", "gpu"]) == 6
    assert "offline mode is on" in capsys.readouterr().err
    assert main(["remotes", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["offline"] is False
    assert len(fake.requests) == before


def test_policy_show_lists_remote_keys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = MachinePolicy(
        "test",
        {
            "RemoteEndpoints": ["gpu=http://gpu-01:8000"],
            "AllowUserRemotes": False,
            "Proxy": "http://p:3128",
        },
    )
    monkeypatch.setattr("desktop.root.context.load_machine_policy", lambda: policy)
    assert main(["policy", "show", "--json"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    assert rows["remote_endpoints"]["value"] == ["gpu=http://gpu-01:8000"]
    assert rows["allow_user_remotes"]["locked"] and rows["proxy"]["value"] == "http://p:3128"


def test_user_stores_only_the_key_of_an_it_endpoint(
    fake: Fake,
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
) -> None:
    policy = MachinePolicy(
        "test", {"RemoteEndpoints": [f"corp={fake.url}"], "AllowUserRemotes": False}
    )
    monkeypatch.setattr("desktop.root.context.load_machine_policy", lambda: policy)
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-remote\n"))
    assert main(["remotes", "add", "corp", "http://elsewhere/v1", "--api-key-stdin"]) == 0
    assert memory_keyring.store[("EdgeDesk remote engine", "corp")] == "sk-remote"
    capsys.readouterr()
    assert main(["run", "corp/echo", "key works"]) == 0
    assert capsys.readouterr().out.strip() == "key works"
    assert fake.requests[-1] == "POST /v1/chat/completions echo"


def test_allowed_models_covers_user_remotes_not_it_endpoints(fake: Fake) -> None:
    mine = build_context(policy=MachinePolicy())
    mine.remote_registry.add("mine", fake.url)
    mine.close()
    ctx = build_context(
        policy=MachinePolicy(
            "test", {"AllowedModels": ["glm-4-9b-0414"], "RemoteEndpoints": [f"corp={fake.url}"]}
        )
    )
    keyring_set("corp", "sk-remote")
    keyring_set("mine", "sk-remote")
    try:
        with pytest.raises(ModelNotAllowed, match="AllowedModels"):
            _ask(ctx, "mine/echo")
        assert _ask(ctx, "corp/echo") == "quarterly numbers "
    finally:
        ctx.close()
