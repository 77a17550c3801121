"""The remote engines this machine knows: IT's (policy) and the user's own (remotes.json).

Only names and URLs are written to disk; API keys live in the OS keyring alone. Models
are named ``NAME/MODEL`` (MODEL may itself contain slashes, as vLLM's ids do).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from desktop.base.errors import ConfigError, InvalidRequest, ModelNotFound
from desktop.base.keychain import Keychain

KEYRING_SERVICE = "EdgeDesk remote engine"
REMOTE_KEYS = Keychain(KEYRING_SERVICE, "API key")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


@dataclass(frozen=True)
class RemoteEndpoint:
    """One remote engine: its name, OpenAI base URL (ending in /v1) and who set it."""

    name: str
    base_url: str
    source: str = "user"  # "user" or "policy"


def normalise_url(url: str) -> str:
    """The base URL as the OpenAI API wants it: scheme, host, path ending in ``/v1``."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(
            f"'{url}' is not an http(s) URL; give the server's base URL, e.g. http://gpu-01:8000/v1"
        )
    return url if url.endswith("/v1") else url + "/v1"


def check_name(name: str) -> str:
    """A remote's name: letters, digits, ``_.-``; no slash (it prefixes model ids)."""
    if not _NAME.match(name):
        raise InvalidRequest(
            f"'{name}' is not a usable remote name; use letters, digits, "
            "'-', '_' or '.' (at most 40), no '/'"
        )
    return name


def parse_policy_entries(entries: Sequence[str]) -> list[RemoteEndpoint]:
    """Policy ``RemoteEndpoints`` items, each ``NAME=URL``."""
    found = []
    for item in entries:
        name, sep, url = item.partition("=")
        if not sep:
            raise ConfigError(f"policy RemoteEndpoints entry '{item}' must be NAME=URL")
        found.append(RemoteEndpoint(check_name(name.strip()), normalise_url(url), "policy"))
    return found


KeyGetter = Callable[[str], str | None]


def keyring_get(name: str) -> str | None:
    """The API key stored for remote ``name`` (None if none, or no usable keyring)."""
    return REMOTE_KEYS.get(name)


def keyring_set(name: str, key: str) -> None:
    """Store remote ``name``'s API key in the OS keyring (never in a file of ours)."""
    REMOTE_KEYS.set(name, key)


def keyring_delete(name: str) -> None:
    """Forget remote ``name``'s API key if one is stored."""
    REMOTE_KEYS.delete(name)


class RemoteRegistry:
    """Reads and edits the list of remotes; policy entries win and cannot be removed.

    Plain blocking calls; any thread (edits are whole-file rewrites, last one wins).
    """

    def __init__(
        self,
        path: Path,
        *,
        policy_entries: Sequence[str] = (),
        allow_user: bool = True,
        keys: KeyGetter = keyring_get,
    ) -> None:
        self.path = path
        self.policy = parse_policy_entries(policy_entries)
        self.allow_user = allow_user
        self._keys = keys

    def _user(self) -> list[RemoteEndpoint]:
        if not self.path.exists():
            return []
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return [RemoteEndpoint(r["name"], r["base_url"]) for r in raw.get("remotes", [])]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{self.path} is damaged ({exc}); fix or delete it and add the remotes again"
            ) from None

    def all(self) -> list[RemoteEndpoint]:
        """Policy remotes, then the user's (hidden when AllowUserRemotes is off)."""
        found = list(self.policy)
        taken = {r.name for r in found}
        if self.allow_user:
            found += [r for r in self._user() if r.name not in taken]
        return found

    def get(self, name: str) -> RemoteEndpoint | None:
        """The remote called ``name``, if any."""
        return next((r for r in self.all() if r.name == name), None)

    def key(self, name: str) -> str | None:
        """The API key for ``name`` from the keyring (read only when a call needs it)."""
        return self._keys(name)

    def add(self, name: str, url: str) -> RemoteEndpoint:
        """Add or replace a user remote."""
        if not self.allow_user:
            raise ConfigError(
                "your organization does not allow adding remote engines "
                "(policy AllowUserRemotes); use the ones IT provides"
            )
        check_name(name)
        if any(r.name == name for r in self.policy):
            raise InvalidRequest(f"'{name}' is set by your organization; pick another name")
        endpoint = RemoteEndpoint(name, normalise_url(url))
        kept = [r for r in self._user() if r.name != name] + [endpoint]
        self._write(kept)
        return endpoint

    def remove(self, name: str) -> bool:
        """Remove a user remote; True if it existed."""
        if any(r.name == name for r in self.policy):
            raise InvalidRequest(f"'{name}' is set by your organization and cannot be removed")
        before = self._user()
        kept = [r for r in before if r.name != name]
        self._write(kept)
        return len(kept) != len(before)

    def _write(self, remotes: list[RemoteEndpoint]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"remotes": [{"name": r.name, "base_url": r.base_url} for r in remotes]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        tmp.replace(self.path)

    def split(self, ref: str) -> tuple[RemoteEndpoint, str] | None:
        """``NAME/MODEL`` → (remote, MODEL) when NAME is a known remote, else None."""
        name, sep, model = ref.partition("/")
        if not sep or not model:
            return None
        remote = self.get(name)
        return None if remote is None else (remote, model)

    def require(self, ref: str) -> tuple[RemoteEndpoint, str]:
        """Like ``split`` but raising ModelNotFound for an unknown remote."""
        found = self.split(ref)
        if found is None:
            raise ModelNotFound(f"no remote engine answers to '{ref}'; see 'edgedesk remotes list'")
        return found
