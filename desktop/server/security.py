"""API keys, the Host-header check, bind rules and per-key rate limits.

Keys are random 256-bit secrets shown once; only their SHA-256 is stored (a slow hash
buys nothing for secrets this long, and every request checks one). One key per client
name, so a leaked key is revoked without touching the others.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from desktop.errors import ConfigError, EdgeDeskError, InvalidRequest

KEY_PREFIX = "edk-"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


class KeyNotFound(EdgeDeskError):
    """No API key has the given client name."""

    exit_code = 3
    http_status = 404
    code = "key_not_found"
    error_type = "invalid_request_error"


@dataclass(frozen=True)
class KeyInfo:
    """A stored key: the client's name, when it was made, and a hint (never the key)."""

    name: str
    created: str
    hint: str


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyStore:
    """API keys in a JSON file (hashes only), written atomically; safe across threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        # The parsed file and the stat it was read under: every request checks a key,
        # and one stat (not a read and parse) is enough to see a revocation at once.
        self._cached: tuple[tuple[int, int, int] | None, dict[str, dict[str, str]]] | None = None

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        # The inode too: every write is a new file (os.replace), so even a same-size
        # rewrite within the clock's resolution reads as a change.
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _current(self) -> dict[str, dict[str, str]]:
        """The keys, parsed again only when the file changed since the last look."""
        signature = self._signature()
        if self._cached is None or self._cached[0] != signature:
            # Stat before read: if a write lands in between, the newer keys are kept under
            # the older stat, and the next look reads the file again.
            self._cached = (signature, self._read())
        return self._cached[1]

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{self.path}: the API key file is unreadable ({exc}); "
                              "delete it and create the keys again") from None
        keys = data.get("keys", {}) if isinstance(data, dict) else None
        if not isinstance(keys, dict):
            raise ConfigError(f"{self.path}: not an API key file; delete it and create keys again")
        return keys

    def _write(self, keys: dict[str, dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": 1, "keys": keys}, handle, indent=2, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def create(self, name: str) -> str:
        """Make a key for client ``name`` and return it; this is the only time it is shown."""
        name = name.strip()
        if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").replace(
                ".", "").isalnum():
            raise InvalidRequest("a key name is 1-64 letters, digits, '-', '_' or '.'")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        with self._lock:
            keys = self._read()
            if name in keys:
                raise InvalidRequest(f"a key named '{name}' exists; revoke it first or pick "
                                     "another name")
            keys[name] = {"sha256": _digest(key), "hint": key[-4:],
                          "created": datetime.now(UTC).isoformat(timespec="seconds")}
            self._write(keys)
        return key

    def list(self) -> list[KeyInfo]:
        """All keys, by name."""
        with self._lock:
            keys = self._read()
        return [KeyInfo(n, k.get("created", ""), k.get("hint", ""))
                for n, k in sorted(keys.items())]

    def revoke(self, name: str) -> None:
        """Delete the key of client ``name``; it stops working at once."""
        with self._lock:
            keys = self._read()
            if name not in keys:
                raise KeyNotFound(f"no API key named '{name}'; see 'edgedesk keys list'")
            del keys[name]
            self._write(keys)

    def verify(self, key: str) -> str | None:
        """The client name owning ``key``, or None; a changed file is re-read at once."""
        digest = _digest(key)
        with self._lock:
            keys = self._current()
        found = None
        for name, entry in keys.items():
            if hmac.compare_digest(entry.get("sha256", ""), digest):
                found = name
        return found


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def api_key(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key a request carries: ``Authorization: Bearer`` or Anthropic's ``x-api-key``.

    Both carry the same keys; Claude Code and the Anthropic SDK send ``x-api-key`` (or a
    Bearer token when given ``ANTHROPIC_AUTH_TOKEN``).
    """
    return bearer_token(authorization) or (x_api_key or "").strip() or None


# ---------------------------------------------------------------- host and bind


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    if host.strip("[]") in {"localhost", "::1"}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, require_key: bool) -> None:
    """Refuse ``--no-auth`` on any address other hosts could reach."""
    if not require_key and not is_loopback(host):
        raise ConfigError(f"--no-auth is only allowed on a loopback address, not {host}; "
                          "create a key with 'edgedesk keys create NAME' instead")


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """Host-header names that reach us legitimately (a web page's own domain never does)."""
    names = set(LOOPBACK_NAMES) | {bound.lower(), bound.strip("[]").lower()}
    names |= {e.lower() for e in extra}
    if bound in ("0.0.0.0", "::", "[::]"):  # noqa: S104 - checking, not binding
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names)


def host_allowed(header: str | None, allowed: frozenset[str], bound: str) -> bool:
    """Whether a Host header names us; IP literals pass on a wildcard bind (no DNS involved)."""
    if not header:
        return False
    host = header.lower()
    if host.startswith("["):
        host = host[: host.find("]") + 1]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host in allowed:
        return True
    if bound in ("0.0.0.0", "::", "[::]"):  # noqa: S104 - checking, not binding
        try:
            ipaddress.ip_address(host.strip("[]"))
            return True
        except ValueError:
            return False
    return False


# ---------------------------------------------------------------- rate limits


class RateLimiter:
    """Per-key requests and tokens per minute over a sliding 60-second window."""

    def __init__(self, requests_per_minute: int | None, tokens_per_minute: int | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._clock = clock
        self._requests: dict[str, deque[float]] = {}
        self._tokens: dict[str, deque[tuple[float, int]]] = {}
        self._lock = threading.Lock()

    def check(self, key: str) -> int | None:
        """Record one request for ``key``; the seconds to wait if over a limit, else None."""
        if self.rpm is None and self.tpm is None:
            return None
        now = self._clock()
        with self._lock:
            reqs = self._requests.setdefault(key, deque())
            toks = self._tokens.setdefault(key, deque())
            while reqs and now - reqs[0] >= 60:
                reqs.popleft()
            while toks and now - toks[0][0] >= 60:
                toks.popleft()
            if self.rpm is not None and len(reqs) >= self.rpm:
                return max(1, int(60 - (now - reqs[0])) + 1)
            if self.tpm is not None and sum(n for _, n in toks) >= self.tpm:
                return max(1, int(60 - (now - toks[0][0])) + 1)
            reqs.append(now)
        return None

    def spend(self, key: str, tokens: int) -> None:
        """Count ``tokens`` (prompt + completion) against ``key``'s minute."""
        if self.tpm is None or tokens <= 0:
            return
        with self._lock:
            self._tokens.setdefault(key, deque()).append((self._clock(), tokens))
