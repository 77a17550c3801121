"""The MCP servers this machine may use: IT's (policy ``McpServers``) and the user's own
(``mcp.json`` in the config folder, the shape LM Studio, Cursor and Claude Desktop use).

``{"mcpServers": {NAME: {"command": ..., "args": [...], "env": {...}}
                  | {"url": ..., "headers": {...}}}}``

A user's server runs only when the policy allows it: ``AllowUserMcp`` off leaves only the
servers IT lists (a user entry with the same name and the same command or URL is IT's);
``ForceOffline`` refuses every HTTP server. A bearer token is kept in the OS keyring,
never in the file.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from desktop.base.errors import ConfigError, InvalidRequest
from desktop.base.keychain import Keychain

KEYRING_SERVICE = "EdgeDesk MCP server"
SERVER_TOKENS = Keychain(KEYRING_SERVICE, "token")
SERVERS_FILE = "mcp.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: a command line (stdio) or a URL (Streamable HTTP), and who set it."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    source: str = "user"  # "user" or "policy"

    @property
    def is_http(self) -> bool:
        """Whether the server is reached over the network (Streamable HTTP)."""
        return bool(self.url)

    @property
    def target(self) -> str:
        """The command line or URL, as the user and the allow-list write it."""
        return self.url or shlex.join([self.command, *self.args])

    # Any: an mcp.json entry, in the format other MCP clients share
    def to_json(self) -> dict[str, Any]:
        """The server's ``mcp.json`` entry."""
        if self.url:
            return {"url": self.url, **({"headers": self.headers} if self.headers else {})}
        return {
            "command": self.command,
            "args": list(self.args),
            **({"env": self.env} if self.env else {}),
        }


def check_name(name: str) -> str:
    """A server's name: letters, digits, ``_.-`` (at most 40)."""
    if not _NAME.match(name):
        raise InvalidRequest(
            f"'{name}' is not a usable tool server name; use letters, "
            "digits, '-', '_' or '.' (at most 40)"
        )
    return name


def check_url(url: str) -> str:
    """An http(s) URL of a Streamable HTTP MCP endpoint."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(
            f"'{url}' is not an http(s) URL; give the server's MCP "
            "endpoint, e.g. https://tools.example.com/mcp"
        )
    return url.strip()


def from_entry(name: str, entry: Any, source: str = "user") -> ServerConfig:
    """One ``mcpServers`` entry; ConfigError naming the server when it is malformed."""
    if not isinstance(entry, dict):
        raise ConfigError(f"MCP server '{name}' must be an object with 'command' or 'url'")
    url, command = entry.get("url") or entry.get("serverUrl"), entry.get("command")
    args, env, headers = entry.get("args", []), entry.get("env", {}), entry.get("headers", {})
    if not (
        isinstance(args, list)
        and all(isinstance(a, str) for a in args)
        and isinstance(env, dict)
        and isinstance(headers, dict)
    ):
        raise ConfigError(
            f"MCP server '{name}': 'args' must be a list of strings, 'env' and 'headers' objects"
        )
    if isinstance(url, str) and url:
        return ServerConfig(
            name,
            url=check_url(url),
            headers={str(k): str(v) for k, v in headers.items()},
            source=source,
        )
    if isinstance(command, str) and command.strip():
        return ServerConfig(
            name,
            command=command,
            args=tuple(args),
            env={str(k): str(v) for k, v in env.items()},
            source=source,
        )
    raise ConfigError(f"MCP server '{name}' has neither a 'command' nor a 'url'")


def pasted_servers(text: str) -> list[ServerConfig]:
    """The servers in a pasted ``mcp.json``: ``{"mcpServers": {...}}`` (LM Studio, Cursor,
    Claude Desktop), ``{"servers": {...}}`` (VS Code), or the entries object alone.
    InvalidRequest saying what is wrong when it is none of these."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidRequest(f"the pasted text is not JSON ({exc})") from None
    entries = data.get("mcpServers", data.get("servers", data)) if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise InvalidRequest(
            'the pasted JSON lists no servers; paste {"mcpServers": {"NAME": '
            '{"command": …}}} as an mcp.json holds them'
        )
    found = []
    for name, entry in entries.items():
        try:
            found.append(from_entry(check_name(str(name)), entry))
        except ConfigError as exc:
            raise InvalidRequest(exc.message) from None
    return found


def parse_policy_entries(entries: Sequence[str]) -> list[ServerConfig]:
    """Policy ``McpServers`` items: ``NAME=COMMAND LINE`` or ``NAME=URL``."""
    found = []
    for item in entries:
        name, sep, target = item.partition("=")
        target = target.strip()
        if not sep or not target:
            raise ConfigError(f"policy McpServers entry '{item}' must be NAME=COMMAND or NAME=URL")
        name = check_name(name.strip())
        if urlsplit(target).scheme in ("http", "https"):
            found.append(ServerConfig(name, url=check_url(target), source="policy"))
        else:
            argv = shlex.split(target)
            found.append(ServerConfig(name, command=argv[0], args=tuple(argv[1:]), source="policy"))
    return found


@dataclass(frozen=True)
class McpPolicy:
    """What the machine policy says about tool servers (defaults: no policy)."""

    servers: tuple[str, ...] = ()  # McpServers entries
    allow_user: bool = True  # AllowUserMcp
    require_approval: bool = False  # McpRequireApproval: every MCP call asks, always
    offline: bool = False  # ForceOffline / offline mode: no HTTP servers


class ServerList:
    """Reads and edits ``mcp.json``; says which servers may run and why others may not.

    Plain blocking calls; any thread (edits are whole-file rewrites, last one wins).
    """

    def __init__(self, path: Path, policy: McpPolicy = McpPolicy()) -> None:
        self.path = path
        self.policy = policy
        self.it = parse_policy_entries(policy.servers)

    # Any: mcp.json as parsed; entries are checked as they are read
    def _raw(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"mcpServers": {}}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(raw, dict) or not isinstance(raw.get("mcpServers", {}), dict):
                raise ValueError("'mcpServers' must be an object")
        except ValueError as exc:
            raise ConfigError(
                f"{self.path} is damaged ({exc}); fix it or delete it and add the servers again"
            ) from None
        raw.setdefault("mcpServers", {})
        return raw

    def user(self) -> list[ServerConfig]:
        """The user's servers as ``mcp.json`` lists them (allowed or not)."""
        return [from_entry(str(name), entry) for name, entry in self._raw()["mcpServers"].items()]

    def all(self) -> list[ServerConfig]:
        """IT's servers, then the user's that do not reuse one of their names."""
        taken = {s.name for s in self.it}
        return [*self.it, *(s for s in self.user() if s.name not in taken)]

    def refusal(self, server: ServerConfig) -> str | None:
        """Why ``server`` may not run on this machine, or None when it may."""
        if server.is_http and self.policy.offline:
            return (
                f"the tool server '{server.name}' is reached over the network "
                f"({server.url}) and offline mode is on (policy ForceOffline or the "
                "'offline' setting); only command-line (stdio) servers run offline"
            )
        if server.source == "policy" or self.policy.allow_user:
            return None
        if any(s.name == server.name and s.target == server.target for s in self.it):
            return None
        return (
            f"your organization allows only the tool servers IT lists (policy "
            f"AllowUserMcp is off and McpServers does not list '{server.name}' with "
            f"{server.target})"
        )

    def get(self, name: str) -> ServerConfig:
        """The server called ``name``; InvalidRequest listing those there are."""
        for server in self.all():
            if server.name == name:
                return server
        names = ", ".join(s.name for s in self.all()) or "none yet"
        raise InvalidRequest(
            f"no tool server named '{name}' (servers: {names}; add one "
            "with 'edgedesk tools add NAME -- COMMAND…')",
            param="server",
        )

    def add(self, server: ServerConfig) -> ServerConfig:
        """Add or replace a user server (refused when the policy would not run it)."""
        check_name(server.name)
        if any(s.name == server.name for s in self.it):
            raise ConfigError(
                f"'{server.name}' is a tool server your organization provides; choose another name"
            )
        reason = self.refusal(server)
        if reason is not None and not server.is_http:
            raise ConfigError(reason, kind="policy")
        raw = self._raw()
        raw["mcpServers"][server.name] = server.to_json()
        self._write(raw)
        return server

    def remove(self, name: str) -> None:
        """Remove a user server and forget its token; IT's cannot be removed."""
        if any(s.name == name for s in self.it):
            raise ConfigError(
                f"'{name}' is provided by your organization's policy "
                "(McpServers) and cannot be removed"
            )
        raw = self._raw()
        if name not in raw["mcpServers"]:
            self.get(name)  # raises, naming the servers there are
        del raw["mcpServers"][name]
        self._write(raw)
        token_delete(name)

    # Any: mcp.json, kept with keys other MCP clients wrote
    def _write(self, raw: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(self.path)


def token_get(name: str) -> str | None:
    """The bearer token stored for HTTP server ``name`` (None: none, or no keyring)."""
    return SERVER_TOKENS.get(name)


def token_set(name: str, token: str) -> None:
    """Keep server ``name``'s bearer token in the OS keyring (never in a file of ours)."""
    SERVER_TOKENS.set(name, token)


def token_delete(name: str) -> None:
    """Forget server ``name``'s token if one is stored."""
    SERVER_TOKENS.delete(name)
