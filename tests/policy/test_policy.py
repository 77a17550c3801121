"""Machine policy: precedence, every key, fail-closed, CLI and templates."""

from __future__ import annotations

import importlib.util
import json
import plistlib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import Paths, load_settings
from desktop.base.errors import ConfigError, ModelNotAllowed
from desktop.cli import main
from desktop.policy import KEYS, load_machine_policy
from desktop.policy import _sources as policy_sources
from desktop.policy._schema import parse_policy
from desktop.root.context import build_context

REPO = Path(__file__).resolve().parents[2]
FULL = {
    "ForceOffline": True,
    "AllowDownloads": False,
    "AllowedModels": ["tiny-chat"],
    "HubEndpoint": "https://mirror.corp.example",
    "SharedModelsDir": "/srv/models",
    "ServerAllowed": False,
    "ServerBindAddress": "127.0.0.2",
    "ServerPort": 9443,
    "ServerRequireKey": True,
    "ServerAllowedOrigins": ["https://ide.corp.example"],
    "RetentionDays": 14,
    "EphemeralOnly": True,
    "DataLocation": "/srv/edgedesk-data",
    "RemoteEndpoints": ["gpu=https://llm.corp.example/v1"],
    "AllowUserRemotes": False,
    "CaBundle": "/etc/ssl/corp.pem",
    "Proxy": "http://proxy.corp.example:3128",
    "MaxParallel": 2,
    "McpServers": ["time=uvx mcp-server-time"],
    "AllowUserMcp": False,
    "McpRequireApproval": True,
    "EncryptAtRest": True,
    "MaxKeyLifetimeDays": 90,
    "AuditLog": True,
    "AuditLogPath": "/var/log/edgedesk-audit",
    "ImageMaxMB": 5,
    "ImageMaxMegapixels": 12,
    "CollectUsage": False,
}


def _write_linux_policy(root: Path, content: str) -> None:
    target = root / "etc" / "edgedesk" / "policy.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)


def _settings(root: Path, home: Path, user: str = "", environ: dict[str, str] | None = None):
    paths = Paths.from_env({"EDGEDESK_HOME": str(home)})
    paths.ensure()
    paths.settings_file.write_text(user)
    return load_settings(paths, environ=environ or {}, policy=load_machine_policy(root, "linux"))


def test_every_key_overrides_user_file_and_environment(tmp_path: Path) -> None:
    _write_linux_policy(tmp_path, json.dumps(FULL))
    user = (
        "offline = false\nallow_downloads = true\nretention_days = 365\ncollect_usage = true\n"
        'ephemeral_only = false\ndata_location = "/home/me/data"\n[server]\nenabled = true\nport = 1234\nhost = "0.0.0.0"\n'
        'require_key = false\nallowed_origins = ["*"]\n'
    )
    eff = _settings(tmp_path, tmp_path / "home", user, {"EDGEDESK_OFFLINE": "0"})
    s = eff.settings
    assert (s.offline, s.allow_downloads, s.allowed_models, s.hub_endpoint) == (
        True,
        False,
        ["tiny-chat"],
        "https://mirror.corp.example",
    )
    assert (s.shared_models_dir, s.server.enabled, s.server.host, s.server.port) == (
        "/srv/models",
        False,
        "127.0.0.2",
        9443,
    )
    assert s.server.require_key is True and s.server.allowed_origins == ["https://ide.corp.example"]
    assert (s.retention_days, s.ephemeral_only) == (14, True)
    assert s.data_location == "/srv/edgedesk-data" and s.engine.max_parallel == 2
    assert (s.mcp_servers, s.allow_user_mcp, s.mcp_require_approval) == (
        ["time=uvx mcp-server-time"],
        False,
        True,
    )
    assert (s.image_max_mb, s.image_max_megapixels) == (5, 12)
    assert s.collect_usage is False
    assert len(eff.locked) == len(KEYS)
    assert all(eff.sources[key.setting] == "policy" for key in KEYS)


def test_no_policy_file_means_no_locks(tmp_path: Path) -> None:
    eff = _settings(tmp_path, tmp_path / "home", "offline = true\n")
    assert eff.locked == frozenset() and eff.settings.offline is True


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "cannot be read as JSON"),
        ('["a list"]', "must hold a JSON object"),
        ('{"ServerPort": 70000}', "ServerPort must be between 1 and 65535"),
        ('{"ImageMaxMB": 65}', "ImageMaxMB must be between 1 and 64"),
        ('{"ForceOffline": "yes"}', "ForceOffline must be true or false"),
        ('{"AllowModels": []}', "unknown policy key 'AllowModels'"),
        ('{"DataLocation": "EdgeDesk data"}', "DataLocation must be an absolute folder"),
    ],
)
def test_invalid_policy_fails_closed_with_a_visible_reason(
    tmp_path: Path, content: str, reason: str
) -> None:
    _write_linux_policy(tmp_path, content)
    policy = load_machine_policy(tmp_path, "linux")
    assert policy.problem is not None and reason in policy.problem
    eff = _settings(tmp_path, tmp_path / "home", "offline = false\n")
    assert eff.settings.offline is True and eff.settings.allow_downloads is False
    assert eff.settings.server.enabled is False and eff.settings.allowed_models == []


def test_macos_managed_preferences_are_read(tmp_path: Path) -> None:
    plist = tmp_path / "Library" / "Managed Preferences" / f"{policy_sources.MACOS_BUNDLE_ID}.plist"
    plist.parent.mkdir(parents=True)
    plist.write_bytes(
        plistlib.dumps({"ForceOffline": True, "ServerPort": 9000, "PayloadUUID": "ignored"})
    )
    policy = load_machine_policy(tmp_path, "darwin")
    assert policy.problem is None and dict(policy.forced()) == {
        "offline": True,
        "server.port": 9000,
    }


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x00garbage, not a plist", "is not a readable property list"),
        (plistlib.dumps(["ForceOffline"]), "must hold a dictionary of policy keys"),
        (plistlib.dumps({"ServerPort": "eighty"}), "ServerPort"),
    ],
)
def test_malformed_macos_policy_fails_closed(tmp_path: Path, content: bytes, reason: str) -> None:
    plist = tmp_path / "Library" / "Managed Preferences" / f"{policy_sources.MACOS_BUNDLE_ID}.plist"
    plist.parent.mkdir(parents=True)
    plist.write_bytes(content)
    policy = load_machine_policy(tmp_path, "darwin")
    assert policy.problem is not None and reason in policy.problem
    assert str(plist) in policy.problem and "locked down" in policy.problem
    forced = dict(policy.forced())
    assert forced["offline"] is True and forced["server.enabled"] is False


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"ServerPort": "eighty"}, "ServerPort"),
        ({"ForceOffline": "maybe"}, "ForceOffline"),
        ({"RetentionDays": -3}, "RetentionDays"),
    ],
)
def test_malformed_registry_policy_fails_closed(
    monkeypatch: pytest.MonkeyPatch, values: dict[str, Any], reason: str
) -> None:
    origin = "HKLM\\" + policy_sources.WINDOWS_POLICY_KEY
    monkeypatch.setattr(policy_sources, "_read_windows", lambda: (origin, values))
    policy = load_machine_policy(Path("/"), "win32")
    assert policy.problem is not None and reason in policy.problem and origin in policy.problem
    forced = dict(policy.forced())
    assert forced["offline"] is True and forced["allow_downloads"] is False


def test_registry_style_values_are_accepted() -> None:
    assert parse_policy({"ForceOffline": 1, "AllowedModels": "a\nb"}) == {
        "ForceOffline": True,
        "AllowedModels": ["a", "b"],
    }


@pytest.fixture
def machine_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Install a Linux policy under a temporary root for in-process CLI runs."""
    root = tmp_path / "root"

    def install(data: dict[str, Any] | str) -> None:
        _write_linux_policy(root, data if isinstance(data, str) else json.dumps(data))

    monkeypatch.setattr(
        "desktop.root.context.load_machine_policy", lambda: load_machine_policy(root, "linux")
    )
    return install


def test_policy_show_reports_sources_and_locks(machine_policy, capsys) -> None:
    machine_policy({"ForceOffline": True, "ServerPort": 9443})
    assert main(["policy", "show", "--json"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    assert rows["offline"] == {"key": "offline", "value": True, "source": "policy", "locked": True}
    assert rows["server.port"]["value"] == 9443 and rows["server.port"]["locked"]
    assert rows["theme"]["source"] == "default" and not rows["theme"]["locked"]
    assert main(["policy", "show"]) == 0
    assert "[locked: set by your organization]" in capsys.readouterr().out


def test_cli_flag_cannot_loosen_policy(
    machine_policy, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import httpx

    from desktop.server._runner import ServerRunner

    machine_policy(
        {"ForceOffline": True, "ServerBindAddress": "127.0.0.1", "ServerRequireKey": True}
    )
    seen: dict[str, Any] = {}

    def serve_briefly(self: ServerRunner, on_ready: Any = None) -> None:
        # The real server, started as `serve` starts it, asked once, then stopped.
        self.start()
        try:
            seen["host"], seen["url"] = self.settings.host, self.url
            seen["status"] = httpx.get(f"{self.url}/models", timeout=30).status_code
        finally:
            self.stop()

    monkeypatch.setattr(ServerRunner, "serve_forever", serve_briefly)
    from tests.fixtures.children import free_port

    port = str(free_port())
    assert main(["serve", "--no-auth", "--host", "0.0.0.0", "--port", port]) == 0
    assert seen["host"] == "127.0.0.1" and seen["url"].startswith("http://127.0.0.1:")
    assert seen["status"] == 401  # a key is still required
    main(["policy", "show", "--json"])
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    assert rows["offline"]["value"] is True
    assert rows["server.require_key"]["value"] is True


def test_invalid_policy_warns_on_every_command(machine_policy, capsys) -> None:
    machine_policy("{broken")
    assert main(["policy", "show"]) == 0
    captured = capsys.readouterr()
    assert "machine policy" in captured.err and "locked down" in captured.err


def test_allowed_models_blocks_others_by_id_and_digest(
    machine_policy, tiny_chat: Path, tiny_embed: Path
) -> None:
    import hashlib

    digest = hashlib.sha256(tiny_embed.read_bytes()).hexdigest()
    machine_policy({"AllowedModels": ["some-other-model", digest]})
    ctx = build_context()
    with pytest.raises(ModelNotAllowed, match="blocked by your organization's policy"):
        ctx.resolver(str(tiny_chat))
    assert ctx.resolver(str(tiny_embed)).kind == "embedding"  # allowed by its SHA-256
    assert main(["run", str(tiny_chat), "hi"]) == 3


def _generator():
    spec = importlib.util.spec_from_file_location(
        "edgedesk_policy_generate", REPO / "packaging" / "policy" / "generate.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_templates_parse_and_name_every_schema_key(tmp_path: Path) -> None:
    _generator().generate(tmp_path)
    ns = {"p": "http://schemas.microsoft.com/GroupPolicy/2006/07/PolicyDefinitions"}
    admx = ET.parse(tmp_path / "EdgeDesk.admx").getroot()
    names = {p.get("name") for p in admx.findall(".//p:policy", ns)}
    assert names == {k.name for k in KEYS}
    adml = ET.parse(tmp_path / "en-US" / "EdgeDesk.adml").getroot()
    string_ids = {s.get("id") for s in adml.findall(".//p:string", ns)}
    assert all(k.name in string_ids and f"{k.name}_Explain" in string_ids for k in KEYS)
    profile = plistlib.loads((tmp_path / "org.edgedesk.EdgeDesk.mobileconfig").read_bytes())
    payload = profile["PayloadContent"][0]
    assert parse_policy({k: v for k, v in payload.items() if not k.startswith("Payload")})
    example = json.loads((tmp_path / "policy.example.json").read_text())
    assert set(parse_policy(example)) == {k.name for k in KEYS}


def test_shared_models_dir_serves_catalog_models_read_only(
    machine_policy, tmp_path: Path, tiny_chat: Path
) -> None:
    from desktop.resolve._locate import default_files

    shared = tmp_path / "shared"
    machine_policy({"SharedModelsDir": str(shared)})
    ctx = build_context()
    entry = ctx.catalog.get("glm-edge-1.5b")
    target = shared / entry.repo / default_files(entry, ctx.paths)[0].name
    target.parent.mkdir(parents=True)
    target.write_bytes(tiny_chat.read_bytes())
    target.chmod(0o444)
    spec = ctx.resolver("glm-edge-1.5b")
    assert spec.path == target and spec.model_id == "glm-edge-1.5b"
    assert main(["run", "glm-edge-1.5b", "hi", "--max-tokens", "3"]) == 0


def test_server_forbidden_by_policy_refuses_every_way_to_start(
    machine_policy, capsys, tiny_chat: Path
) -> None:
    machine_policy({"ServerAllowed": False})
    assert main(["serve", "--port", "8799", "--model", str(tiny_chat)]) == 2
    assert "turned off by your organization's policy" in capsys.readouterr().err
    ctx = build_context()
    with pytest.raises(ConfigError, match="ServerAllowed"):
        ctx.api_server.start()
    from desktop.machine._bench import measure_http

    assert "skipped" in measure_http(
        ctx, str(tiny_chat), tokens=2, clients=1, progress=lambda _s: None
    )


def test_flags_overridden_by_policy_are_reported(machine_policy, capsys) -> None:
    machine_policy({"ForceOffline": False})
    assert main(["--offline", "policy", "show"]) == 0
    assert "offline is set by your organization" in capsys.readouterr().err
    machine_policy({"ForceOffline": True})
    assert main(["--offline", "policy", "show"]) == 0
    assert "set by your organization; the command-line" not in capsys.readouterr().err
