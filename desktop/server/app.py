"""``create_app``: the ASGI app, built from its dependencies (no globals).

Every request passes one guard (request id, Host check, key, rate limit, body limit,
access log and metrics) before the routes; every error leaves in the shape of the
protocol its route speaks (OpenAI's; Anthropic's under ``/v1/messages``; Ollama's under
``/api/``).
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute, Route

from desktop.audit import Auditor, NoAudit
from desktop.chat.vision import known_to_see, takes_pictures
from desktop.config import ServerSettings
from desktop.engine.images import DEFAULT_LIMITS, ImageLimits
from desktop.engine.types import RemotePlan
from desktop.errors import EdgeDeskError
from desktop.resolve import ModelResolver, looks_like_path
from desktop.server.cache import LRUCache
from desktop.server.error_responses import error_response, install_error_handlers
from desktop.server.leniency import CONTEXT_HEADER, DROPPED_TOOLS_HEADER
from desktop.server.metrics import AccessLog, AccessRecord, Metrics, now_iso
from desktop.server.security import (
    KeyStore,
    RateLimiter,
    allowed_hosts,
    api_key,
    check_bind,
    host_allowed,
)
from desktop.server.services import ModelDirectory, RequestInfo, Services
from desktop.store.responses import ResponseStore

if TYPE_CHECKING:
    from desktop.engine.scheduler import Scheduler
    from desktop.tools.servers import ServerList
    from desktop.tools.toolbox import ToolBox

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("edgedesk.server")

__all__ = ["ModelDirectory", "RequestInfo", "ResolverDirectory", "Services", "create_app"]


_STORED_RESPONSE = re.compile(r"^/v1/responses/[^/]+(/input_items)?$")
# Like /health, Ollama's version check reveals nothing and clients probe it before a key.
OPEN_ROUTES = frozenset({"/health", "/openapi.json", "/api/version"})
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")


@dataclass
class ResolverDirectory:
    """Every model the resolver can serve: registered, downloaded or imported, catalog."""

    resolver: ModelResolver
    installed: Callable[[], list[str]] = list  # ids in the installed index (pulls, imports)
    remote_ids: Callable[[], list[str]] = list  # NAME/MODEL ids the remote engines list

    def ids(self) -> list[str]:
        """Registered ids, then installed ones, then catalog models present on disk."""
        found = list(dict.fromkeys([*self.resolver.registered, *self.installed()]))
        found = [ref for ref in found if self.has(ref)]
        for entry in self.resolver.catalog:
            if entry.id not in found and self.has(entry.id):
                found.append(entry.id)
        return found + [m for m in self.remote_ids() if m not in found]

    def has(self, model: str) -> bool:
        """Whether the scheduler could serve ``model``, by the resolver's own lookup.

        A file path is never a model id here: clients must not name files on this disk.
        """
        if self.resolver.remote is not None and self.resolver.remote(model) is not None:
            return True  # a known remote; the remote itself says if MODEL exists
        if looks_like_path(model) and model not in self.resolver.registered:
            return False
        try:
            self.resolver.locate(model)
        except EdgeDeskError:
            return False
        return True

    def kind(self, model: str) -> tuple[str, int | None]:
        """The resolved kind (catalog entry, else from the header) and the pooling type."""
        spec = self.resolver(model)
        if isinstance(spec.plan, RemotePlan):
            return spec.kind, None
        return spec.kind, self.resolver.info(spec.file).pooling_type

    def describe(self, model: str) -> dict[str, Any]:
        """Header facts about ``model`` for Ollama's listings; reads the header only."""
        spec = self.resolver(model)
        if isinstance(spec.plan, RemotePlan):
            return {"kind": spec.kind, "remote": spec.plan.name}
        info = self.resolver.info(spec.file)
        return {
            "kind": spec.kind,
            "architecture": info.architecture,
            "parameters": info.parameters,
            "file_bytes": info.file_bytes,
            "context_length": info.context_length,
            "embedding_length": info.embedding_length,
            "block_count": info.block_count,
            "file_type": info.file_type,
            "chat_template": spec.chat_template or info.chat_template,
            "reasoning": spec.reasoning_format == "think",
            "vision": known_to_see(spec),
            "modified": spec.file.stat().st_mtime,
        }

    def vision(self, model: str) -> bool:
        """Whether pictures may be sent to ``model`` (``chat.vision.takes_pictures``: a
        local model with a vision projector, or a remote one, whose server decides); a
        model that cannot be resolved (policy, a damaged file) raises that error."""
        return takes_pictures(self.resolver(model))


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
    """The context ``model`` was loaded with (None: not loaded), for the context header."""
    for loaded in scheduler.loaded():
        if loaded.model_id == model:
            return loaded.report.context_length
    return None


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
            self._record(scope, path, status, info)

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
        found = keys.check(token) if token else None
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
        info.key_name = found.name
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

    def _record(self, scope: Scope, path: str, status: int, info: RequestInfo) -> None:
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
        if info.key_name:
            svc.limiter.spend(info.key_name, info.tokens_in + info.tokens_out)
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


def create_app(
    scheduler: Scheduler,
    models: ModelDirectory,
    settings: ServerSettings,
    keys: KeyStore | None,
    *,
    access_log: AccessLog | None = None,
    metrics: Metrics | None = None,
    bound_host: str | None = None,
    extra_hosts: tuple[str, ...] = (),
    stored: ResponseStore | None = None,
    mcp: ASGIApp | None = None,
    tool_servers: ServerList | None = None,
    audit: Auditor | None = None,
    toolbox: ToolBox | None = None,
    image_limits: ImageLimits = DEFAULT_LIMITS,
) -> FastAPI:
    """The ASGI app serving the OpenAI API from ``scheduler``; ``keys=None`` means no auth.

    ``stored`` keeps Responses API responses (None: ``store: true`` is refused); ``mcp``
    serves ``/mcp`` (EdgeDesk's documents as an MCP server), behind the same key;
    ``image_limits`` caps every picture a request sends (a 400 beyond them).
    """
    from desktop.server.anthropic_routes import router as anthropic_router
    from desktop.server.ollama_routes import router as ollama_router
    from desktop.server.openai_routes import router as openai_router
    from desktop.server.responses_routes import router as responses_router

    host = bound_host or settings.host
    check_bind(host, keys is not None)
    services = Services(
        scheduler=scheduler,
        models=models,
        settings=settings,
        keys=keys,
        access_log=access_log or AccessLog(None),
        metrics=metrics or Metrics(),
        bound_host=host,
        limiter=RateLimiter(settings.requests_per_minute, settings.tokens_per_minute),
        responses=LRUCache(settings.cache_entries) if settings.response_cache else None,
        embeddings=LRUCache(settings.cache_entries * 16),
        allowed=allowed_hosts(host, extra_hosts),
        stored=stored or ResponseStore(None),
        tool_servers=tool_servers,
        audit=audit or NoAudit(),
        toolbox=toolbox,
        image_limits=image_limits,
    )
    app = FastAPI(
        title="EdgeDesk local OpenAI-compatible API", version="1", docs_url=None, redoc_url=None
    )
    app.state.services = services
    routers = (openai_router, responses_router, anthropic_router, ollama_router)
    for router in routers:
        app.include_router(router)
    served = [route for router in routers for route in router.routes]
    if mcp is not None:
        served.append(Route("/mcp", endpoint=mcp, methods=["GET", "POST", "DELETE"]))
        app.router.routes.append(served[-1])
    install_error_handlers(app)
    app.add_middleware(Guard, services=services, routes=known_routes(served))
    if settings.allowed_origins:
        # Keys travel in the Authorization header, never cookies: no credentials mode, so
        # even an allowed origin cannot ride on a browser's ambient authority.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.allowed_origins),
            allow_credentials=False,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "X-Request-ID",
                "x-api-key",
                "anthropic-version",
                "anthropic-beta",
            ],
            expose_headers=["X-Request-ID", "Retry-After", DROPPED_TOOLS_HEADER, CONTEXT_HEADER],
        )
    return app
