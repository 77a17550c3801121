"""Settings changed while the app runs take effect at once, through ``AppContext.apply_settings``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy, Settings, flatten
from desktop.base.errors import ConfigError, NetworkBlocked
from desktop.catalog._installed import InstalledModel
from desktop.catalog._pull import parse_target, pull
from desktop.root.context import AppContext, build_context
from tests.fixtures.children import free_port
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.lazy_reads import reads_while_building, undeclared

REPO = "org/tiny-GGUF"
FILE = "tiny-Q4_K_M.gguf"


@pytest.fixture
def hub(hub: FakeHub, tiny_chat: Path) -> FakeHub:
    """The shared fake Hub (tests/conftest.py) with the tiny chat model."""
    hub.add_repo(REPO, {FILE: tiny_chat.read_bytes()})
    return hub


@pytest.fixture
def ctx() -> Iterator[AppContext]:
    context = build_context(policy=NoPolicy())
    yield context
    context.close()


def download(ctx: AppContext) -> InstalledModel:
    target = parse_target(f"{REPO}:{FILE}", ctx.catalog)
    return pull(
        target,
        hub=ctx.hub,
        downloader=ctx.downloader(),
        index=ctx.installed,
        models_dir=ctx.paths.models_dir,
    )


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
    old = ctx.api_server
    needs_restart = ctx.apply_settings(
        {
            "server.port": 8799,
            "language": "zh_CN",
            "engine.keep_alive_s": 5.0,
            "engine.max_loaded_models": 3,
        }
    )
    assert needs_restart == ["engine.max_loaded_models", "language"]
    assert ctx.scheduler.keep_alive_s == 5.0
    assert ctx.api_server is not old
    assert ctx.api_server.settings.port == 8799


def test_new_picture_caps_reach_the_stopped_server_on_its_next_start(ctx: AppContext) -> None:
    old = ctx.api_server
    assert ctx.apply_settings({"image_max_megapixels": 2}) == []
    assert ctx.api_server is not old
    assert ctx.api_server.image_limits.max_pixels == 2_000_000 == ctx.image_limits.max_pixels


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


# What a change of each setting rebuilds, written out by hand so that a member renamed or
# a key dropped from a declaration fails a test: first the members that name the key,
# then those built from them (the hub and the remote directory hold the transport, the
# toolbox the tool servers, the window's server the toolbox).
TLS = {"ca_bundle", "proxy"}
MCP = {"mcp_servers", "allow_user_mcp", "mcp_require_approval", "offline"}
IMAGES = {"image_max_mb", "image_max_megapixels"}
REBUILT_ON = {
    "transport": TLS,
    "hub": {"hub_endpoint"} | TLS,
    "searcher": {"reranker_model"},
    "remote_registry": {"remote_endpoints", "allow_user_remotes"},
    "remote_directory": {"allowed_models", "server.generation_timeout_s", "offline"}
    | TLS
    | {"remote_endpoints", "allow_user_remotes"},
    "tool_servers": MCP,
    "toolbox": MCP,
}


def rebuilt_by(key: str) -> list[str]:
    """The members a change of ``key`` rebuilds (the window's server, while stopped: every
    server setting, the picture caps, usage collection and what its toolbox is built from)."""
    names = {name for name, keys in REBUILT_ON.items() if key in keys}
    if key.startswith("server.") or key in IMAGES or key in MCP or key == "collect_usage":
        names.add("api_server")
    return sorted(names)


def test_every_setting_rebuilds_exactly_the_members_declared(ctx: AppContext) -> None:
    keys = sorted(flatten(Settings().model_dump()))
    assert {"proxy", "server.port", "engine.keep_alive_s"} <= set(keys)
    assert {k: ctx.lazies.rebuilt_by([k]) for k in keys} == {k: rebuilt_by(k) for k in keys}


KEPT = ["net", "audit", "installed", "key_store", "scheduler", "library", "mcp_clients"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("proxy", "http://127.0.0.1:9"),
        ("hub_endpoint", "http://127.0.0.1:9"),
        ("reranker_model", "bge-reranker-v2-m3"),
        ("allow_user_remotes", False),
        ("mcp_require_approval", True),
        ("offline", True),
        ("allowed_models", ["qwen"]),
        ("mcp_servers", []),
        ("embedding_model", "bge-base-en-v1.5"),
        ("server.port", 8799),
        ("engine.keep_alive_s", 5.0),
    ],
)
def test_a_change_gives_new_objects_only_where_it_is_declared(
    ctx: AppContext, key: str, value: object
) -> None:
    names = sorted({*REBUILT_ON, "api_server", *KEPT})
    before = {name: getattr(ctx, name) for name in names}
    ctx.apply_settings({key: value})
    renewed = [name for name in names if getattr(ctx, name) is not before[name]]
    assert renewed == rebuilt_by(key)


def test_a_running_server_keeps_its_settings_until_it_starts_again(ctx: AppContext) -> None:
    ctx.apply_settings({"server.port": free_port()})
    server = ctx.server
    assert not server.running and not AppContext.api_server.of(ctx).built  # asking built nothing
    runner = server.start()
    try:
        assert server.running and server.url == runner.url
        assert ctx.apply_settings({"server.requests_per_minute": 30}) == [
            "server.requests_per_minute"
        ]
        assert server.runner is runner and runner.settings.requests_per_minute is None
        server.stop()
        assert not server.running and server.runner is runner
        fresh = server.to_start()
        assert fresh is not runner and fresh.settings.requests_per_minute == 30
        assert server.to_start() is fresh  # up to date: kept
    finally:
        server.stop()
        runner.stop()


def test_every_member_read_while_another_is_built_is_declared(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Build every member: what each builder reads is recorded (here, not by the app), and
    # a read its ``needs`` (or ``uses``) leave out would be a rebuild no declaration follows.
    with reads_while_building(monkeypatch) as reads:
        for name in ctx.lazies.names():
            getattr(ctx, name)
    assert ("scheduler", "resolver") in reads  # the recorder sees the reads
    assert undeclared(ctx.lazies, reads) == []
    assert set(ctx.lazies.built_order()) == set(ctx.lazies.names())


def test_a_change_reaching_a_running_server_through_its_toolbox_needs_a_restart(
    ctx: AppContext,
) -> None:
    ctx.apply_settings({"server.port": free_port()})
    runner = ctx.api_server
    toolbox = ctx.toolbox
    runner.start()
    try:
        assert ctx.apply_settings({"mcp_require_approval": True}) == ["mcp_require_approval"]
        assert ctx.api_server is runner  # kept: it still serves with the toolbox it has
        assert ctx.toolbox is not toolbox  # chats get the new rule at once
    finally:
        runner.stop()


def test_close_stops_the_server_before_the_models_and_the_models_before_the_databases(
    ctx: AppContext,
) -> None:
    closed: list[str] = []
    chats = ctx.chat_store
    docs = ctx.documents_db
    runner = ctx.api_server
    scheduler = ctx.scheduler
    for name, obj, method in [
        ("chats", chats, "close"),
        ("documents", docs, "close"),
        ("server", runner, "stop"),
        ("models", scheduler, "close"),
    ]:
        real = getattr(obj, method)

        def record(*args: object, _name: str = name, _real: object = real) -> object:
            closed.append(_name)
            return _real(*args)  # type: ignore[operator]

        setattr(obj, method, record)
    # The server records usage over a connection of its own.
    assert ctx.databases() == [chats.database, docs, ctx.usage_store.database]
    ctx.close()
    assert closed.index("server") < closed.index("models") < closed.index("chats")
    assert closed.index("models") < closed.index("documents")
    assert sorted(closed) == ["chats", "documents", "models", "server"]
