"""The one policy schema: every key IT can set, its type, and the setting it locks.

The same table generates the Windows ADMX/ADML templates, the macOS configuration
profile and the JSON example (packaging/policy/generate.py), so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from desktop.base.config import expand_path
from desktop.base.errors import ConfigError

ValueType = Literal["bool", "int", "string", "list"]


@dataclass(frozen=True)
class PolicyKey:
    """One policy key as IT writes it, and the user setting it forces."""

    name: str
    type: ValueType
    setting: str
    description: str
    restrictive: Any  # the value used when the policy file is invalid (fail closed)
    minimum: int | None = None
    maximum: int | None = None


KEYS: tuple[PolicyKey, ...] = (
    PolicyKey(
        "ForceOffline",
        "bool",
        "offline",
        "Forbid every network connection (downloads, Hub search).",
        True,
    ),
    PolicyKey(
        "AllowDownloads",
        "bool",
        "allow_downloads",
        "Allow users to download models from the Hub or the mirror.",
        False,
    ),
    PolicyKey(
        "AllowedModels",
        "list",
        "allowed_models",
        "Only these model ids (or file SHA-256 digests) may be loaded.",
        [],
    ),
    PolicyKey(
        "HubEndpoint",
        "string",
        "hub_endpoint",
        "Internal mirror URL used instead of the public Hugging Face Hub.",
        None,
    ),
    PolicyKey(
        "SharedModelsDir",
        "string",
        "shared_models_dir",
        "Read-only folder of models pre-seeded by IT.",
        None,
    ),
    PolicyKey(
        "ServerAllowed",
        "bool",
        "server.enabled",
        "Allow the local OpenAI-compatible server to run.",
        False,
    ),
    PolicyKey(
        "ServerBindAddress",
        "string",
        "server.host",
        "Address the local server binds to.",
        "127.0.0.1",
    ),
    PolicyKey("ServerPort", "int", "server.port", "TCP port of the local server.", None, 1, 65535),
    PolicyKey(
        "ServerRequireKey",
        "bool",
        "server.require_key",
        "Require an API key for every request to the local server.",
        True,
    ),
    PolicyKey(
        "ServerAllowedOrigins",
        "list",
        "server.allowed_origins",
        "Browser origins allowed to call the local server (CORS).",
        [],
    ),
    PolicyKey(
        "MaxKeyLifetimeDays",
        "int",
        "server.max_key_lifetime_days",
        "API keys of the local server expire within this many days of their "
        "creation (older keys too); a longer --expires is refused.",
        None,
        1,
        3650,
    ),
    PolicyKey(
        "RetentionDays",
        "int",
        "retention_days",
        "Delete conversations older than this many days.",
        None,
        1,
        36500,
    ),
    PolicyKey(
        "CollectUsage",
        "bool",
        "collect_usage",
        "Keep content-free usage of the local API (who, which model, tokens, timings; "
        "never prompts or answers) for edgedesk stats and the Usage tab; false: none "
        "is recorded.",
        False,
    ),
    PolicyKey(
        "EphemeralOnly", "bool", "ephemeral_only", "Never store conversations on disk.", True
    ),
    PolicyKey(
        "EncryptAtRest",
        "bool",
        "encrypt_at_rest",
        "Keep conversations and document indexes encrypted on disk (SQLCipher, key in "
        "the OS keyring); a plaintext database is encrypted at start, or EdgeDesk "
        "refuses to start saying why.",
        None,
    ),
    PolicyKey(
        "AuditLog",
        "bool",
        "audit_log",
        "Keep an append-only, hash-chained, content-free audit log of API calls, "
        "keys, exports, deletions, data moves, encryption and policy changes.",
        True,
    ),
    PolicyKey(
        "AuditLogPath",
        "string",
        "audit_log_path",
        "Folder for the audit log's daily files (default: the log folder's 'audit').",
        None,
    ),
    PolicyKey(
        "MaxParallel",
        "int",
        "engine.max_parallel",
        "Most requests one model serves at once (caps the engine.parallel slots; "
        "fewer slots need less memory).",
        None,
        1,
        64,
    ),
    PolicyKey(
        "DataLocation",
        "string",
        "data_location",
        "Folder for chats, document indexes, keys and models (e.g. an encrypted "
        "volume); users cannot move it.",
        None,
    ),
    PolicyKey(
        "RemoteEndpoints",
        "list",
        "remote_endpoints",
        "Remote engines IT provides, each NAME=URL (an OpenAI-compatible base URL); "
        "their models appear as NAME/MODEL.",
        [],
    ),
    PolicyKey(
        "AllowUserRemotes",
        "bool",
        "allow_user_remotes",
        "Allow users to add remote engines of their own.",
        False,
    ),
    PolicyKey(
        "CaBundle",
        "string",
        "ca_bundle",
        "PEM file of extra root certificates (e.g. a TLS-inspecting proxy's) trusted "
        "besides the OS trust store.",
        None,
    ),
    PolicyKey(
        "Proxy",
        "string",
        "proxy",
        "Proxy URL for every outbound HTTPS connection (default: HTTPS_PROXY).",
        None,
    ),
    PolicyKey(
        "McpServers",
        "list",
        "mcp_servers",
        "MCP tool servers IT provides and allows, each NAME=COMMAND LINE (stdio) or "
        "NAME=URL (Streamable HTTP).",
        [],
    ),
    PolicyKey(
        "AllowUserMcp",
        "bool",
        "allow_user_mcp",
        "Allow users' own MCP tool servers (off: only those McpServers lists).",
        False,
    ),
    PolicyKey(
        "McpRequireApproval",
        "bool",
        "mcp_require_approval",
        "Ask the user before every MCP tool call (no 'Always allow').",
        True,
    ),
    PolicyKey(
        "ImageMaxMB",
        "int",
        "image_max_mb",
        "Largest picture a user or an API client may attach, in MiB (default 20; "
        "the engine's ceiling is 64).",
        None,
        1,
        64,
    ),
    PolicyKey(
        "ImageMaxMegapixels",
        "int",
        "image_max_megapixels",
        "Most pixels of an attached picture, in millions (default 50; the engine's "
        "ceiling is 200); checked from the header before anything is decoded.",
        None,
        1,
        200,
    ),
)
_BY_NAME = {key.name: key for key in KEYS}


def _coerce(key: PolicyKey, value: Any) -> Any:
    """Validate one value; registry DWORDs and plist integers arrive as ints for bools."""
    if key.type == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ConfigError(f"policy key {key.name} must be true or false, got {value!r}")
    if key.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"policy key {key.name} must be a whole number, got {value!r}")
        if (key.minimum is not None and value < key.minimum) or (
            key.maximum is not None and value > key.maximum
        ):
            raise ConfigError(
                f"policy key {key.name} must be between {key.minimum} and {key.maximum}, "
                f"got {value}"
            )
        return value
    if key.type == "string":
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"policy key {key.name} must be a non-empty string, got {value!r}")
        if (
            key.setting in ("data_location", "audit_log_path")
            and not expand_path(value.strip()).is_absolute()
        ):
            # Caught here, the policy fails closed with a reason; in the settings it would
            # stop every user's start.
            raise ConfigError(
                f"policy key {key.name} must be an absolute folder (after "
                f"expanding ~ and variables), got {value!r}"
            )
        return value.strip()
    if isinstance(value, str):  # registry REG_MULTI_SZ or a comma list in a plain string
        value = [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"policy key {key.name} must be a list of strings, got {value!r}")
    return list(value)


# Any: a policy's values are text, numbers, flags or lists by key; KEYS checks each
def parse_policy(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a policy document; unknown keys and bad values raise ConfigError."""
    parsed: dict[str, Any] = {}
    for name, value in raw.items():
        if name.startswith("$") or name.startswith("_"):  # $schema, _comment
            continue
        key = _BY_NAME.get(name)
        if key is None:
            known = ", ".join(sorted(_BY_NAME))
            raise ConfigError(f"unknown policy key '{name}' (known keys: {known})")
        parsed[name] = _coerce(key, value)
    return parsed


# Any: settings values by key, as parse_policy checked them
def to_settings(policy: Mapping[str, Any]) -> dict[str, Any]:
    """Map validated policy keys to the dotted settings they force."""
    return {_BY_NAME[name].setting: value for name, value in policy.items()}


# Any: settings values by key (text, numbers, flags)
def fail_closed_settings() -> dict[str, Any]:
    """The most restrictive settings, used when the policy cannot be read."""
    return {key.setting: key.restrictive for key in KEYS if key.restrictive is not None}
