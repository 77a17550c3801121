"""Settings changed while the app runs take effect at once, through ``AppContext.apply_settings``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.app import AppContext, build_context
from desktop.catalog.installed import InstalledModel
from desktop.catalog.pull import parse_target, pull
from desktop.config import NoPolicy
from desktop.errors import ConfigError, NetworkBlocked
from tests.fixtures.fake_hub import FakeHub

REPO = "org/tiny-GGUF"
FILE = "tiny-Q4_K_M.gguf"


@pytest.fixture
def hub(tiny_chat: Path, edgedesk_home: Path, monkeypatch: pytest.MonkeyPatch):
    """A fake Hub on 127.0.0.1 with the tiny chat model, set as the Hub endpoint."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    with FakeHub() as fake:
        fake.add_repo(REPO, {FILE: tiny_chat.read_bytes()})
        config = edgedesk_home / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.toml").write_text(f'hub_endpoint = "{fake.url}"\n')
        yield fake


@pytest.fixture
def ctx() -> Iterator[AppContext]:
    context = build_context(policy=NoPolicy())
    yield context
    context.close()


def download(ctx: AppContext) -> InstalledModel:
    target = parse_target(f"{REPO}:{FILE}", ctx.catalog)
    return pull(target, hub=ctx.hub, downloader=ctx.downloader(), index=ctx.installed,
                models_dir=ctx.paths.models_dir)


def test_ticking_offline_stops_hub_search_and_downloads_at_once(hub: FakeHub, ctx: AppContext):
    assert [h.repo for h in ctx.hub.search("tiny")] == [REPO]  # gate and hub built online
    assert hub.log

    ctx.apply_settings({"offline": True})
    hub.log.clear()
    with pytest.raises(NetworkBlocked, match="offline mode is on"):
        ctx.hub.search("tiny")
    with pytest.raises(NetworkBlocked, match="offline mode is on"):
        download(ctx)
    assert hub.log == []
    assert not (ctx.paths.models_dir / FILE).exists()
    # Saved too: the next start is offline as well.
    assert build_context(policy=NoPolicy()).settings.offline is True

    ctx.apply_settings({"offline": False})
    assert [h.repo for h in ctx.hub.search("tiny")] == [REPO]
    installed = download(ctx)
    assert hub.log
    assert ctx.installed.lookup(installed.id) is not None


def test_a_new_hub_endpoint_is_used_by_the_next_search(hub: FakeHub, ctx: AppContext):
    ctx.apply_settings({"hub_endpoint": "http://127.0.0.1:9"})
    assert ctx.hub.endpoint == "http://127.0.0.1:9"
    ctx.apply_settings({"hub_endpoint": hub.url})
    assert [h.repo for h in ctx.hub.search("tiny")] == [REPO]


def test_a_stopped_server_is_rebuilt_and_restart_only_keys_are_named(ctx: AppContext):
    ctx.scheduler  # noqa: B018 - built, so its limits need a restart to change
    old = ctx.server
    needs_restart = ctx.apply_settings({"server.port": 8799, "language": "zh_CN",
                                        "engine.keep_alive_s": 5.0,
                                        "engine.max_loaded_models": 3})
    assert needs_restart == ["engine.max_loaded_models", "language"]
    assert ctx.scheduler.keep_alive_s == 5.0
    assert ctx.server is not old
    assert ctx.server.settings.port == 8799


def test_a_locked_setting_is_refused_and_nothing_changes(hub: FakeHub, edgedesk_home: Path):
    class Policy:
        def forced(self) -> dict[str, object]:
            return {"offline": False}

    context = build_context(policy=Policy())
    try:
        with pytest.raises(ConfigError, match="set by your organization"):
            context.apply_settings({"offline": True, "retention_days": 3})
        assert context.net.offline is False
        assert context.settings.retention_days is None
    finally:
        context.close()
