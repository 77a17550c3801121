"""API keys, the Host-header check, bind rules and per-key rate limits.

Keys are random 256-bit secrets shown once; only their SHA-256 is stored (a slow hash
buys nothing for secrets this long, and every request checks one). One key per client
name, so a leaked key is revoked without touching the others.

A key may be scoped (``KeyScope``): to models, to endpoints (chat, embeddings,
documents), to a rate, to an expiry, and to reading one document collection. The
policy ``MaxKeyLifetimeDays`` caps every key's life, older keys included.
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from desktop.base.audit import Auditor, NoAudit
from desktop.base.errors import ConfigError, EdgeDeskError, InvalidRequest

# One key's record in api_keys.json: JSON read back from a file a person may have edited,
# so each field is checked where it is used (``_scope``, ``verify``…).
KeyEntry = dict[str, object]

KEY_PREFIX = "edk-"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


class KeyNotFound(EdgeDeskError):
    """No API key has the given client name."""

    exit_code = 3
    http_status = 404
    code = "key_not_found"
    error_type = "invalid_request_error"


ENDPOINTS = ("chat", "embeddings", "documents")
DAY_S = 86_400.0
_CHAT_PATHS = (
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/responses",
    "/v1/messages",
    "/api/chat",
    "/api/generate",
)
_EMBEDDING_PATHS = ("/v1/embeddings", "/v1/rerank", "/api/embed", "/api/embeddings")
# /mcp's tools (search_documents, read_document_passage, list_collections) read documents.
_DOCUMENT_PATHS = ("/v1/documents", "/v1/collections", "/v1/search", "/mcp")
_READ_ONLY_PATHS = ("/mcp",)  # POSTs that only read (JSON-RPC): open to read-only keys


def endpoint_of(path: str) -> str | None:
    """The scope a request path needs (chat, embeddings, documents); None: any key may."""
    for scope, prefixes in (
        ("chat", _CHAT_PATHS),
        ("embeddings", _EMBEDDING_PATHS),
        ("documents", _DOCUMENT_PATHS),
    ):
        if any(path == p or path.startswith(p + "/") for p in prefixes):
            return scope
    return None  # listing models, health, metrics, version: every valid key


@dataclass(frozen=True)
class KeyScope:
    """What a key may do: models, endpoints, a rate, an expiry (None: no limit)."""

    models: tuple[str, ...] | None = None
    endpoints: tuple[str, ...] | None = None
    rate_per_min: int | None = None
    expires: float | None = None  # Unix time
    read_only_docs: str | None = None  # the one collection it may read (documents scope)

    def describe(self) -> str:
        """The scope in a few words, as ``keys list`` and the Server screen show it."""
        parts = []
        if self.endpoints is not None:
            parts.append("endpoints " + ",".join(self.endpoints))
        if self.models is not None:
            parts.append("models " + ",".join(self.models))
        if self.read_only_docs:
            parts.append(f"reads documents of {self.read_only_docs}")
        if self.rate_per_min is not None:
            parts.append(f"{self.rate_per_min}/min")
        if self.expires is not None:
            parts.append("expires " + _iso(self.expires))
        return "; ".join(parts) or "any model, any endpoint"

    def allows_endpoint(self, path: str, method: str) -> bool:
        """Whether a request to ``path`` with ``method`` is within the endpoint scope."""
        needed = endpoint_of(path)
        if needed is None:
            return True
        if self.endpoints is not None and needed not in self.endpoints:
            return False
        # A read-only documents key reads; it never indexes, changes or deletes.
        return not (
            needed == "documents"
            and self.read_only_docs
            and method.upper() not in ("GET", "HEAD")
            and path.rstrip("/") not in _READ_ONLY_PATHS
        )


@dataclass(frozen=True)
class KeyInfo:
    """A stored key: the client's name, when it was made, and a hint (never the key)."""

    name: str
    created: str
    hint: str
    scope: KeyScope = field(default_factory=KeyScope)
    last_used: str | None = None  # ISO time of the last request it opened (None: never)


@dataclass(frozen=True)
class Verified:
    """A key that matched: whose it is, what it may do, and whether it has expired."""

    name: str
    scope: KeyScope
    expired: bool
    # The key's own identity (``owner_of``), not its name: what the key keeps (stored
    # responses) is its alone, never a later key made under the same name.
    owner: str = ""
    created_s: float = 0.0  # when it was made (Unix time)


def owner_of(digest: str) -> str:
    """The identity a key's stored things belong to, from its stored SHA-256: stable
    for the key's life, different for a new key under the same name. A hash of the hash
    (the key file's digest is not copied into the database); ``key:`` cannot begin a
    key's name, so it never equals an owner stored as a name before."""
    return "key:" + hashlib.sha256(f"edgedesk owner\0{digest}".encode()).hexdigest()[:32]


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds")


def _created_s(entry: KeyEntry) -> float:
    try:
        return datetime.fromisoformat(str(entry.get("created", ""))).timestamp()
    except ValueError:
        return 0.0  # unknown age: under a lifetime cap it counts as old


def _scope(entry: KeyEntry, max_lifetime_days: int | None) -> KeyScope:
    """A stored entry's scope, the policy's lifetime cap applied."""
    expires = entry.get("expires")
    expires = float(expires) if isinstance(expires, int | float) else None
    if max_lifetime_days is not None:
        cap = _created_s(entry) + max_lifetime_days * DAY_S
        expires = cap if expires is None else min(expires, cap)
    models, endpoints = entry.get("models"), entry.get("endpoints")
    rate = entry.get("rate_per_min")
    return KeyScope(
        models=tuple(models) if isinstance(models, list) else None,
        endpoints=tuple(endpoints) if isinstance(endpoints, list) else None,
        rate_per_min=rate if isinstance(rate, int) else None,
        expires=expires,
        read_only_docs=docs
        if isinstance(docs := entry.get("read_only_docs"), str) and docs
        else None,
    )


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``2w`` (or a plain number of days) in seconds."""
    value = text.strip().lower()
    units = {"d": DAY_S, "h": 3600.0, "w": 7 * DAY_S, "m": 60.0}
    unit = units.get(value[-1:])
    number = value[:-1] if unit is not None else value
    try:
        amount = float(number)
    except ValueError:
        raise InvalidRequest(f"'{text}' is not a duration; write e.g. 30d, 12h or 2w") from None
    if amount <= 0:
        raise InvalidRequest("the expiry must be in the future")
    return amount * (unit or DAY_S)


def parse_rate(text: str) -> int:
    """``N/min`` (or a plain N) as requests per minute."""
    value = text.strip().lower().replace(" ", "")
    for suffix in ("/min", "/m", "/minute", ""):
        if value.endswith(suffix):
            number = value[: len(value) - len(suffix)] if suffix else value
            if number.isdigit() and int(number) > 0:
                return int(number)
    raise InvalidRequest(f"'{text}' is not a rate; write N/min, e.g. 60/min")


class KeyStore:
    """API keys in a JSON file (hashes only), written atomically; safe across threads."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], float] = time.time,
        max_lifetime_days: int | None = None,
        audit: Auditor | None = None,
    ) -> None:
        self.path = path
        self.audit = audit or NoAudit()
        self.usage_path = path.with_name(path.stem + ".used.json")
        self.clock = clock
        self.max_lifetime_days = max_lifetime_days
        self._lock = threading.Lock()
        self._used: dict[str, float] = {}  # last use per key, written at most once a minute
        self._used_written: dict[str, float] = {}
        self._unwritten = False  # a use remembered but not yet in the file (see flush)
        # The parsed file and the stat it was read under: every request checks a key,
        # and one stat (not a read and parse) is enough to see a revocation at once.
        self._cached: tuple[tuple[int, int, int] | None, dict[str, KeyEntry]] | None = None

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        # The inode too: every write is a new file (os.replace), so even a same-size
        # rewrite within the clock's resolution reads as a change.
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _current(self) -> dict[str, KeyEntry]:
        """The keys, parsed again only when the file changed since the last look."""
        signature = self._signature()
        if self._cached is None or self._cached[0] != signature:
            # Stat before read: if a write lands in between, the newer keys are kept under
            # the older stat, and the next look reads the file again.
            self._cached = (signature, self._read())
        return self._cached[1]

    def _read(self) -> dict[str, KeyEntry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(
                f"{self.path}: the API key file is unreadable ({exc}); "
                "delete it and create the keys again"
            ) from None
        keys = data.get("keys", {}) if isinstance(data, dict) else None
        if not isinstance(keys, dict):
            raise ConfigError(f"{self.path}: not an API key file; delete it and create keys again")
        return keys

    def _write(self, keys: dict[str, KeyEntry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": 1, "keys": keys}, handle, indent=2, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def create(
        self,
        name: str,
        *,
        models: Sequence[str] | None = None,
        endpoints: Sequence[str] | None = None,
        expires_in_s: float | None = None,
        rate_per_min: int | None = None,
        read_only_docs: str | None = None,
    ) -> str:
        """Make a key for client ``name`` and return it; this is the only time it is shown.

        Scopes left None do not limit; ``read_only_docs`` also grants the documents
        endpoint (reading that collection only). Under ``MaxKeyLifetimeDays`` a key
        expires within the cap, and a longer ``expires_in_s`` is refused.
        """
        name = name.strip()
        if (
            not name
            or len(name) > 64
            or not name.replace("-", "").replace("_", "").replace(".", "").isalnum()
        ):
            raise InvalidRequest("a key name is 1-64 letters, digits, '-', '_' or '.'")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        with self._lock:
            keys = self._read()
            if name in keys:
                raise InvalidRequest(
                    f"a key named '{name}' exists; revoke it first or pick another name"
                )
            keys[name] = {
                "sha256": _digest(key),
                "hint": key[-4:],
                "created": _iso(self.clock()),
                **self._scope_fields(models, endpoints, expires_in_s, rate_per_min, read_only_docs),
            }
            self._write(keys)
        self.audit.record(
            "key.created", key=name, scope=_scope(keys[name], self.max_lifetime_days).describe()
        )
        return key

    def set_scope(
        self,
        name: str,
        *,
        models: Sequence[str] | None = None,
        endpoints: Sequence[str] | None = None,
        expires_in_s: float | None = None,
        rate_per_min: int | None = None,
        read_only_docs: str | None = None,
    ) -> KeyScope:
        """Replace the scope of client ``name``'s key (same rules as ``create``); the key
        itself is unchanged, so its client keeps working within the new scope at once."""
        with self._lock:
            keys = self._read()
            if name not in keys:
                raise KeyNotFound(f"no API key named '{name}'; see 'edgedesk keys list'")
            fields = self._scope_fields(
                models, endpoints, expires_in_s, rate_per_min, read_only_docs
            )
            kept = {k: v for k, v in keys[name].items() if k in ("sha256", "hint", "created")}
            keys[name] = {**kept, **fields}
            self._write(keys)
        scope = _scope(keys[name], self.max_lifetime_days)
        self.audit.record("key.scope_changed", key=name, scope=scope.describe())
        return scope

    def _scope_fields(
        self,
        models: Sequence[str] | None,
        endpoints: Sequence[str] | None,
        expires_in_s: float | None,
        rate_per_min: int | None,
        read_only_docs: str | None,
    ) -> KeyEntry:
        fields: KeyEntry = {}
        if models is not None:
            chosen = [m.strip() for m in models if m.strip()]
            if not chosen:
                raise InvalidRequest("--models names no model")
            fields["models"] = chosen
        if endpoints is not None or read_only_docs:
            chosen = [e.strip().lower() for e in (endpoints or ()) if e.strip()]
            unknown = [e for e in chosen if e not in ENDPOINTS]
            if unknown:
                raise InvalidRequest(
                    f"unknown endpoint '{unknown[0]}'; the endpoints are " + ", ".join(ENDPOINTS)
                )
            if read_only_docs and "documents" not in chosen:
                chosen.append("documents")
            fields["endpoints"] = sorted(set(chosen), key=ENDPOINTS.index)
        if read_only_docs:
            fields["read_only_docs"] = read_only_docs.strip()
        if rate_per_min is not None:
            if rate_per_min < 1:
                raise InvalidRequest("the rate must be at least 1/min")
            fields["rate_per_min"] = int(rate_per_min)
        cap = self.max_lifetime_days
        if cap is not None and expires_in_s is not None and expires_in_s > cap * DAY_S:
            raise InvalidRequest(
                f"your organization limits API keys to {cap} days "
                "(policy MaxKeyLifetimeDays); pick a shorter --expires"
            )
        if expires_in_s is None and cap is not None:
            expires_in_s = cap * DAY_S
        if expires_in_s is not None:
            if expires_in_s <= 0:
                raise InvalidRequest("the expiry must be in the future")
            fields["expires"] = self.clock() + expires_in_s
        return fields

    def list(self) -> list[KeyInfo]:
        """All keys, by name, with their scopes and last use."""
        with self._lock:
            keys = self._read()
            used = {**self._read_usage(), **self._used}
        return [
            KeyInfo(
                n,
                str(k.get("created", "")),
                str(k.get("hint", "")),
                _scope(k, self.max_lifetime_days),
                _iso(used[n]) if n in used else None,
            )
            for n, k in sorted(keys.items())
        ]

    def _read_usage(self) -> dict[str, float]:
        try:
            data = json.loads(self.usage_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # only a convenience: unreadable means "not known"
        if not isinstance(data, dict):
            return {}
        return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float)}

    def _note_use(self, name: str) -> None:
        """Remember the key's last use; the file is rewritten at most once a minute a key."""
        now = self.clock()
        self._used[name] = now
        if now - self._used_written.get(name, float("-inf")) < 60:
            self._unwritten = True  # written by the next use after the minute, or flush
            return
        self._used_written[name] = now
        self._write_usage()

    def _write_usage(self) -> None:
        """Write every remembered use to the usage file (under the lock)."""
        self._unwritten = False
        merged = {**self._read_usage(), **self._used}
        tmp = self.usage_path.with_suffix(".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(merged, handle)
            os.replace(tmp, self.usage_path)
        except OSError:
            pass  # a full disk must not fail the request it records

    def revoke(self, name: str) -> None:
        """Delete the key of client ``name``; it stops working at once."""
        with self._lock:
            keys = self._read()
            if name not in keys:
                raise KeyNotFound(f"no API key named '{name}'; see 'edgedesk keys list'")
            del keys[name]
            self._write(keys)
            self._used.pop(name, None)
        self.audit.record("key.revoked", key=name)

    def verify(self, key: str) -> str | None:
        """The client name owning ``key`` (expired or not), or None."""
        found = self.check(key)
        return None if found is None else found.name

    def note_use(self, name: str) -> None:
        """Key ``name`` opened a request that was answered: its "last used" is now."""
        with self._lock:
            self._note_use(name)

    def flush(self) -> None:
        """Write the last uses not yet in the file (kept to once a minute a key while
        serving), so that the next start shows the same "last used" as this one."""
        with self._lock:
            if self._unwritten:
                self._write_usage()

    def check(self, key: str, *, note: bool = True) -> Verified | None:
        """The key's owner, scope and expiry, or None; a changed file is re-read at once.

        ``note``: count the check as a use (the server notes one only once the request
        was answered, with ``note_use``)."""
        digest = _digest(key)
        with self._lock:
            keys = self._current()
            found = None
            for name, entry in keys.items():
                if hmac.compare_digest(str(entry.get("sha256", "")), digest):
                    found = name, entry
            if found is None:
                return None
            scope = _scope(found[1], self.max_lifetime_days)
            expired = scope.expires is not None and self.clock() >= scope.expires
            if not expired and note:
                self._note_use(found[0])
        return Verified(found[0], scope, expired, owner_of(digest), _created_s(found[1]))


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
        raise ConfigError(
            f"--no-auth is only allowed on a loopback address, not {host}; "
            "create a key with 'edgedesk keys create NAME' instead"
        )


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

    def __init__(
        self,
        requests_per_minute: int | None,
        tokens_per_minute: int | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._clock = clock
        self._requests: dict[str, deque[float]] = {}
        self._tokens: dict[str, deque[tuple[float, int]]] = {}
        self._lock = threading.Lock()

    def check(self, key: str, rpm: int | None = None) -> int | None:
        """Record one request for ``key``; the seconds to wait if over a limit, else None.

        ``rpm`` is the key's own requests-per-minute scope, checked with the server's.
        """
        if self.rpm is None and self.tpm is None and rpm is None:
            return None
        now = self._clock()
        with self._lock:
            reqs = self._requests.setdefault(key, deque())
            toks = self._tokens.setdefault(key, deque())
            while reqs and now - reqs[0] >= 60:
                reqs.popleft()
            while toks and now - toks[0][0] >= 60:
                toks.popleft()
            limits = [r for r in (self.rpm, rpm) if r is not None]
            if limits and len(reqs) >= min(limits):
                return max(1, int(60 - (now - reqs[-min(limits)])) + 1)
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
