"""RemoteModels: a remote's list is asked once per TTL, and a settings change asks again."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.net import NetGate, Transport
from desktop.remote import RemoteRegistry, keyring_set
from desktop.remote._models import REMOTE_LIST_TTL_S, RemoteModels
from desktop.root.context import build_context
from tests.remote.conftest import MemoryKeyring
from tests.remote.fake_openai import Fake

pytestmark = pytest.mark.fast


def _listings(fake: Fake) -> int:
    return fake.requests.count("GET /v1/models")


def test_listing_is_reused_for_its_ttl_then_asked_again(
    fake: Fake, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    registry = RemoteRegistry(tmp_path / "remotes.json")
    registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    now = [0.0]
    remote = RemoteModels(
        registry,
        NetGate(tmp_path / "net.jsonl"),
        Transport(),
        allowed_models=None,
        timeout_s=5,
        clock=lambda: now[0],
    )
    before = _listings(fake)
    assert "gpu/echo" in remote.ids()
    now[0] += REMOTE_LIST_TTL_S - 1
    assert "gpu/echo" in remote.ids()
    assert _listings(fake) == before + 1  # a second /v1/models within the TTL asks nobody
    now[0] += 2
    remote.ids()
    assert _listings(fake) == before + 2


def test_offline_lists_no_remote_models_and_asks_nothing(
    fake: Fake, memory_keyring: MemoryKeyring
) -> None:
    ctx = build_context(cli_settings={"offline": True})
    try:
        ctx.remote_registry.add("gpu", fake.url)
        before = _listings(fake)
        assert ctx.remote_model_ids() == []
        assert _listings(fake) == before
    finally:
        ctx.close()


def test_a_change_of_what_the_listing_depends_on_drops_it_and_no_other(
    fake: Fake, memory_keyring: MemoryKeyring
) -> None:
    ctx = build_context()
    try:
        ctx.remote_registry.add("gpu", fake.url)
        keyring_set("gpu", "sk-remote")
        before = _listings(fake)
        assert "gpu/echo" in ctx.remote_model_ids()
        ctx.remote_model_ids()
        assert _listings(fake) == before + 1
        ctx.apply_settings({"theme": "dark"})  # nothing a listing reads: kept
        ctx.remote_model_ids()
        assert _listings(fake) == before + 1
        ctx.apply_settings({"server.generation_timeout_s": 30.0})  # the remotes' timeout
        ctx.remote_model_ids()
        assert _listings(fake) == before + 2
        ctx.apply_settings({"proxy": "http://127.0.0.1:9"})  # the transport it is built with
        ctx.apply_settings({"proxy": None})
        ctx.remote_model_ids()
        assert _listings(fake) == before + 3
    finally:
        ctx.close()
