"""The one gate every outbound connection EdgeDesk makes passes through.

Before a request leaves the process the gate checks offline mode (and the machine
policy's ``allow_downloads``) and appends host, time and purpose to a JSON-lines log the
user can read with ``edgedesk network log``. HTTP clients are wired to it with an event
hook, so redirects to a CDN are checked and logged as well, not just the first URL.
Third-party libraries that phone home on their own are switched off here too.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from desktop.base.errors import ConfigError, NetworkBlocked

# Environment switches that stop libraries calling home unasked. huggingface_hub 2.x
# builds its User-Agent with ``detect_agent()``, which fetches
# ``{HF_ENDPOINT}/api/agent-harnesses`` (at most daily) unless telemetry is disabled;
# the update checks only run in its own CLI but cost nothing to switch off.
PHONE_HOME_OFF: dict[str, str] = {
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    "DO_NOT_TRACK": "1",
    "DISABLE_TELEMETRY": "1",
}

LOG_NAME = "network.jsonl"


def quiet_libraries(environ: MutableMapping[str, str]) -> None:
    """Switch off libraries' telemetry and update checks (before they are imported)."""
    for key, value in PHONE_HOME_OFF.items():
        environ[key] = value


class _RequestLike(Protocol):
    @property
    def method(self) -> str: ...

    @property
    def url(self) -> Any: ...


@dataclass(frozen=True)
class Connection:
    """One outbound request as the user sees it in the network log."""

    time: float
    host: str
    method: str
    path: str
    purpose: str
    allowed: bool
    reason: str = ""
    # Filled for remote-engine calls once they end; 0 for entries logged before a request.
    bytes_sent: int = 0
    bytes_received: int = 0
    # A remote stream that began but ended before the answer did (``reason`` says why):
    # ``bytes_received`` is then what arrived before it broke off, not a whole answer.
    broken_off: bool = False


class NetGate:
    """Allows or refuses outbound requests and records every attempt."""

    def __init__(
        self,
        log_path: Path,
        *,
        offline: bool = False,
        allow_downloads: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.log_path = log_path
        self.offline = offline
        self.allow_downloads = allow_downloads
        self._clock = clock
        self._lock = threading.Lock()
        # Told of every logged entry (the audit log's remote-engine calls); None: nobody.
        self.observer: Callable[[Connection], None] | None = None

    def refusal(self, *, download: bool = False) -> str | None:
        """Why a request would be refused right now, or None when it may go out."""
        if self.offline:
            return (
                "offline mode is on (settings 'offline', EDGEDESK_OFFLINE=1 or "
                "--offline); no network connection is made"
            )
        if download and not self.allow_downloads:
            return "model downloads are turned off ('allow_downloads = false')"
        return None

    def ensure_online(self, purpose: str, *, download: bool = False) -> None:
        """Fail at once with NetworkBlocked if a request for ``purpose`` could not go out."""
        reason = self.refusal(download=download)
        if reason is not None:
            raise NetworkBlocked(
                f"cannot {purpose}: {reason}",
                kind=self._refused_kind(),
                params={"purpose": purpose},
            )

    def check(self, method: str, url: str, purpose: str, *, download: bool = False) -> None:
        """Log a request about to be sent; raise NetworkBlocked (logged too) if refused."""
        parts = urlsplit(url)
        reason = self.refusal(download=download)
        # Query strings are left out of the log: signed CDN URLs carry credentials there.
        entry = Connection(
            self._clock(),
            parts.hostname or "",
            method.upper(),
            parts.path,
            purpose,
            reason is None,
            reason or "",
        )
        self._append(entry)
        if reason is not None:
            raise NetworkBlocked(
                f"cannot {purpose}: {reason}",
                kind=self._refused_kind(),
                params={"purpose": purpose},
            )

    def _refused_kind(self) -> str:
        """Which of ``refusal``'s reasons applies (``errors`` kind), for translated views."""
        return "offline" if self.offline else "downloads_off"

    def record(
        self,
        method: str,
        url: str,
        purpose: str,
        *,
        sent: int,
        received: int,
        error: str = "",
        broken_off: bool = False,
    ) -> None:
        """Log a finished call with its byte counts (never its content)."""
        parts = urlsplit(url)
        self._append(
            Connection(
                self._clock(),
                parts.hostname or "",
                method.upper(),
                parts.path,
                purpose,
                True,
                error,
                sent,
                received,
                broken_off,
            )
        )

    def hook(self, purpose: str, *, download: bool = False) -> Callable[[_RequestLike], None]:
        """An httpx ``request`` event hook that sends every request through ``check``."""

        def on_request(request: _RequestLike) -> None:
            self.check(request.method, str(request.url), purpose, download=download)

        return on_request

    def _append(self, entry: Connection) -> None:
        line = json.dumps(asdict(entry), ensure_ascii=False)
        with self._lock:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        if self.observer is not None:
            self.observer(entry)

    def entries(self, limit: int | None = None) -> list[Connection]:
        """The logged requests, oldest first (the last ``limit`` if given)."""
        return read_log(self.log_path, limit)


def read_log(path: Path, limit: int | None = None) -> list[Connection]:
    """Parse a network log, skipping lines a crash may have left half-written."""
    if not path.exists():
        return []
    entries: list[Connection] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(Connection(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return entries[-limit:] if limit else entries


def log_path_in(log_dir: Path) -> Path:
    """Where the network log lives inside the app's log folder."""
    return log_dir / LOG_NAME


# ---------------------------------------------------------------- TLS and proxies


@dataclass(frozen=True)
class Transport:
    """How outbound HTTPS is made here: the OS trust store, extra roots, a proxy."""

    ca_bundle: str | None = None  # PEM file of extra roots (a TLS-inspecting proxy's CA)
    proxy: str | None = None  # None: HTTPS_PROXY / NO_PROXY from the environment

    def ssl_context(self) -> Any:
        """Verify against the machine's trust store plus ``ca_bundle``.

        The OS store (``truststore``) is what makes a proxy the machine already trusts
        work; certifi's bundle, which most Python tools use, does not know it.
        """
        import ssl

        import truststore

        context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if self.ca_bundle:
            path = Path(os.path.expanduser(self.ca_bundle))  # ~x of no user: as written
            try:
                context.load_verify_locations(cafile=str(path))
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(
                    f"the CA bundle {path} (setting 'ca_bundle' / policy CaBundle) cannot be "
                    f"used: {exc}; point it at a PEM file of certificates"
                ) from None
        return context

    # Any: keyword arguments spread into httpx.Client(**...), each of its own type
    def httpx_options(self) -> dict[str, Any]:
        """``verify``, ``proxy`` and ``trust_env`` for an httpx (or httpx2) client."""
        return {
            "verify": self.ssl_context(),
            "proxy": self.proxy or None,
            "trust_env": self.proxy is None,
        }

    def client(
        self,
        *,
        timeout: Any = 30.0,
        hooks: list[Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """An ``httpx.Client`` that verifies and proxies as configured."""
        import httpx

        return httpx.Client(
            **self.httpx_options(),
            timeout=timeout,
            headers=headers,
            follow_redirects=False,
            event_hooks={"request": hooks or []},
        )


# What the resolver says when a host name cannot be looked up (Linux, macOS, Windows):
# no network at all, or no DNS. Shown raw it read "[Errno -2] Name or service not known".
_NAME_NOT_FOUND = (
    "Name or service not known",
    "nodename nor servname",
    "Temporary failure in name resolution",
    "getaddrinfo failed",
    "No address associated with hostname",
    "Name does not resolve",
)


def cannot_resolve(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a host name that could not be looked up."""
    cause: BaseException | None = exc
    while cause is not None:
        if any(words in str(cause) for words in _NAME_NOT_FOUND):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def explain(exc: BaseException, host: str) -> str:
    """A transport failure in words a user (or their IT) can act on."""
    import ssl

    import httpx

    text = str(exc)
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(
            cause
        ):
            return (
                f"the certificate of {host} is not trusted by this machine; if your "
                "network inspects TLS, ask IT for its root certificate and set it as "
                "'ca_bundle' (policy CaBundle)"
            )
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, httpx.ProxyError) or ("407" in text and "proxy" in text.lower()):
        return (
            f"the proxy refused the connection to {host} ({text}); check the 'proxy' "
            "setting (policy Proxy) or HTTPS_PROXY / NO_PROXY"
        )
    if cannot_resolve(exc):
        return (
            f"cannot find {host}: this computer seems to have no network connection "
            "(its name cannot be looked up)"
        )
    if isinstance(exc, httpx.TimeoutException):
        return f"{host} did not answer in time"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect to {host} ({text or 'connection refused'})"
    return f"the connection to {host} failed ({text or type(exc).__name__})"
