"""``Guard``: what every request passes before the routes, and what every response gets.

In order: a request id (the client's ``X-Request-ID`` when it is sane), the Host header,
the API key and its scope, the rate limit, the body limit (declared, then counted
as it arrives). Each refusal leaves in its protocol's error shape. Every response then
carries its request id and what the server did (tools left out, the model's context), and
is counted in the metrics, the audit trail and the access log.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastapi.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from desktop.server._error_responses import error_response
from desktop.server._leniency import CONTEXT_HEADER, DROPPED_TOOLS_HEADER
from desktop.server._metrics import AccessRecord, now_iso
from desktop.server._security import KeyStore, api_key, host_allowed
from desktop.server._services import RequestInfo, Services
from desktop.server._usage import usage_row

if TYPE_CHECKING:
    from desktop.engine import Scheduler

log = logging.getLogger("edgedesk.server")

_STORED_RESPONSE = re.compile(r"^/v1/responses/[^/]+(/input_items)?$")
# Like /health, Ollama's version check reveals nothing and clients probe it before a key.
OPEN_ROUTES = frozenset({"/health", "/openapi.json", "/api/version"})
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")


class _BodyTooLarge(Exception):
    pass


@dataclass(frozen=True)
class _Refusal:
    """A request the guard turns away before any route sees it."""

    status: int
    message: str
    type_: str
    code: str
    headers: dict[str, str] | None = None


def context_of(scheduler: Scheduler, model: str) -> int | None:
    """The context ``model`` was loaded with (None: not loaded), for the context header:
    read from the scheduler's snapshot, so no response waits on any model's worker."""
    for loaded in scheduler.loaded():
        if loaded.model_id == model:
            return loaded.report.context_length
    return None


def _counted(scope: Scope, path: str) -> bool:
    """Whether a request is usage: not a health probe, preflight or metrics scrape."""
    return path not in OPEN_ROUTES and path != "/metrics" and scope.get("method") != "OPTIONS"


def known_routes(routes: Iterable[BaseRoute]) -> frozenset[str]:
    """The paths of the documented ``routes`` without parameters: each its own label."""
    return frozenset(
        route.path
        for route in routes
        if isinstance(route, Route) and route.include_in_schema and "{" not in route.path
    )


def route_label(path: str, known: frozenset[str]) -> str:
    """The route name metrics and rate limits see (one label per stored-response route)."""
    if path in known:
        return path
    return "/v1/responses/{id}" if _STORED_RESPONSE.match(path) else "other"


class Guard:
    """The checks every request passes, and the bookkeeping every response gets."""

    def __init__(self, app: ASGIApp, services: Services, routes: frozenset[str]) -> None:
        self.app = app
        self.services = services
        self.routes = routes  # the app's own paths, each its own metrics label

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check, run, log."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        given = headers.get("x-request-id", "")
        info = RequestInfo(
            given if _REQUEST_ID.match(given) else "req_" + secrets.token_hex(12),
            time.perf_counter(),
        )
        scope.setdefault("state", {})["edgedesk"] = info
        status = 500  # what the log says when the app sent no response at all

        async def send_wrapped(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                raw = list(message.get("headers", []))
                raw.append((b"x-request-id", info.request_id.encode("latin-1")))
                raw += self._told(info)
                message["headers"] = raw
            await send(message)

        path = scope.get("path", "")
        refusal = self._refuse(scope, headers, info)
        try:
            if refusal is not None:
                await refusal(scope, receive, send_wrapped)
            else:
                await self._run(scope, receive, send_wrapped, headers)
        finally:
            self._record(scope, path, status, info, headers.get("user-agent"))

    def _told(self, info: RequestInfo) -> list[tuple[bytes, bytes]]:
        """Headers that say what the server did with the request: tools left out, context."""
        out: list[tuple[bytes, bytes]] = []
        if info.dropped_tools:
            names = ",".join(info.dropped_tools)
            # The access line names them too (``dropped=``); this one says why.
            log.debug("%s: left out tools this server does not run: %s", info.request_id, names)
            out.append((DROPPED_TOOLS_HEADER.encode(), names.encode("latin-1", "replace")))
        context = context_of(self.services.scheduler, info.model) if info.model else None
        if context is not None:
            out.append((CONTEXT_HEADER.encode(), str(context).encode()))
        return out

    def _refuse(
        self, scope: Scope, headers: dict[str, str], info: RequestInfo
    ) -> JSONResponse | None:
        refusal = self._refusal(scope, headers, info)
        if refusal is not None:
            info.error_code, info.error_type = refusal.code, refusal.type_
            return error_response(
                refusal.status,
                refusal.message,
                refusal.type_,
                refusal.code,
                headers=refusal.headers,
                path=scope.get("path", ""),
            )
        return None

    def _refusal(self, scope: Scope, headers: dict[str, str], info: RequestInfo) -> _Refusal | None:
        svc = self.services
        if not host_allowed(headers.get("host"), svc.allowed, svc.bound_host):
            # The socket's own port: settings say 0 when the runner picked a free one.
            server = scope.get("server") or (None, svc.settings.port)
            return _Refusal(
                403,
                "the Host header does not name this server; use "
                f"http://{svc.bound_host}:{server[1]}",
                "invalid_request_error",
                "invalid_host",
            )
        path = scope.get("path", "")
        if path in OPEN_ROUTES or scope.get("method") == "OPTIONS":
            return None
        rpm = None
        if svc.keys is not None:
            refused = self._check_key(svc.keys, scope, headers, info)
            if isinstance(refused, _Refusal):
                return refused
            rpm = refused
        wait = svc.limiter.check(info.key_name or "-", rpm)
        if wait is not None:
            return _Refusal(
                429,
                f"rate limit reached for this key; retry in {wait} s",
                "rate_limit_error",
                "rate_limit_exceeded",
                headers={"Retry-After": str(wait)},
            )
        length = headers.get("content-length")
        if length and length.isdigit() and int(length) > svc.settings.max_body_bytes:
            return self._too_large()
        return None

    def _too_large(self) -> _Refusal:
        return _Refusal(
            413,
            f"the request body is larger than {self.services.settings.max_body_bytes} bytes",
            "invalid_request_error",
            "request_too_large",
        )

    @staticmethod
    def _check_key(
        keys: KeyStore, scope: Scope, headers: dict[str, str], info: RequestInfo
    ) -> _Refusal | int | None:
        """The refusal for the request's key (401 none/wrong/expired, 403 out of scope),
        else the key's own requests-per-minute (None: no limit of its own)."""
        path = scope.get("path", "")
        token = api_key(headers.get("authorization"), headers.get("x-api-key"))
        # Not a use yet: "last used" is noted once the request was answered (_record).
        found = keys.check(token, note=False) if token else None
        if found is None:
            what = "a wrong or revoked" if token else "no"
            return _Refusal(
                401,
                f"{what} API key was sent; pass 'Authorization: Bearer KEY' "
                "or 'x-api-key: KEY' (create one with 'edgedesk keys create "
                "NAME')",
                "invalid_request_error",
                "invalid_api_key",
            )
        info.key_name, info.key_owner, info.key_created = found.name, found.owner, found.created_s
        if found.expired:
            return _Refusal(
                401,
                f"the API key '{found.name}' expired; create a new one "
                "with 'edgedesk keys create NAME'",
                "invalid_request_error",
                "expired_api_key",
            )
        if not found.scope.allows_endpoint(path, str(scope.get("method", ""))):
            return _Refusal(
                403,
                f"the API key '{found.name}' may not call {path} (its "
                f"scope: {found.scope.describe()})",
                "permission_error",
                "key_scope",
            )
        info.key_models = found.scope.models
        info.key_endpoints = found.scope.endpoints
        info.key_collection = found.scope.read_only_docs
        return found.scope.rate_per_min

    async def _run(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        limit = self.services.settings.max_body_bytes
        seen = 0  # body bytes received so far
        started = False  # whether the response began (then a refusal can no longer go out)

        async def receive_limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _BodyTooLarge
            return message

        async def send_tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive_limited, send_tracked)
        except _BodyTooLarge:
            if not started:
                refusal = self._too_large()
                info: RequestInfo = scope["state"]["edgedesk"]
                info.error_code, info.error_type = refusal.code, refusal.type_
                await error_response(
                    refusal.status,
                    refusal.message,
                    refusal.type_,
                    refusal.code,
                    path=scope.get("path", ""),
                )(scope, receive, send)

    def _record(
        self, scope: Scope, path: str, status: int, info: RequestInfo, agent: str | None
    ) -> None:
        svc = self.services
        latency = time.perf_counter() - info.started
        route = route_label(path, self.routes)
        svc.metrics.record(
            route,
            status,
            latency,
            info.ttft_s,
            tokens_in=info.tokens_in,
            tokens_out=info.tokens_out,
        )
        if svc.usage is not None and _counted(scope, path):
            # Only queued here: the recorder's own thread writes it (usage_recorder).
            mcp = path == "/mcp" or path.startswith("/mcp/")
            svc.usage.record(usage_row(info, "/mcp" if mcp else route, status, latency, agent))
        if info.key_name:
            svc.limiter.spend(info.key_name, info.tokens_in + info.tokens_out)
            if svc.keys is not None and status < 400:  # a refused call is no use of the key
                svc.keys.note_use(info.key_name)
        # The audit trail first (a separate file, hash-chained): who called what, no
        # content; an access-log subscriber then knows the audit line is there.
        svc.audit.record(
            "api.call",
            key=info.key_name,
            method=scope.get("method", ""),
            endpoint=path[:200],
            model=info.model,
            tokens_in=info.tokens_in,
            tokens_out=info.tokens_out,
            status=status,
            request_id=info.request_id,
        )
        client = scope.get("client")
        svc.access_log.write(
            AccessRecord(
                time=now_iso(),
                request_id=info.request_id,
                key_name=info.key_name,
                method=scope.get("method", ""),
                route=path[:200],
                status=status,
                model=info.model,
                tokens_in=info.tokens_in,
                tokens_out=info.tokens_out,
                ttft_ms=round(info.ttft_s * 1000, 1) if info.ttft_s is not None else None,
                latency_ms=round(latency * 1000, 1),
                client=f"{client[0]}:{client[1]}" if client else None,
                error=info.error,
                error_code=info.error_code,
                error_type=info.error_type,
                dropped_tools=list(info.dropped_tools) or None,
            )
        )
