"""``create_app``: the ASGI app, built from its dependencies (no globals).

Every request passes one guard (``guard.Guard``: request id, Host check, key, rate limit,
body limit, access log and metrics) before the routes; every error leaves in the shape
of the protocol its route speaks (``error_responses``: OpenAI's; Anthropic's under
``/v1/messages``; Ollama's under ``/api/``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp

from desktop.audit import Auditor, NoAudit
from desktop.chat.vision import known_to_see, takes_pictures
from desktop.config import ServerSettings
from desktop.engine.images import DEFAULT_LIMITS, ImageLimits
from desktop.engine.types import RemotePlan
from desktop.errors import EdgeDeskError
from desktop.resolve import ModelResolver, looks_like_path
from desktop.server.cache import LRUCache
from desktop.server.error_responses import install_error_handlers
from desktop.server.guard import Guard, known_routes
from desktop.server.leniency import CONTEXT_HEADER, DROPPED_TOOLS_HEADER
from desktop.server.metrics import AccessLog, Metrics
from desktop.server.security import KeyStore, RateLimiter, allowed_hosts, check_bind
from desktop.server.services import ModelDirectory, RequestInfo, Services
from desktop.store.responses import ResponseStore

if TYPE_CHECKING:
    from desktop.engine.scheduler import Scheduler
    from desktop.tools.servers import ServerList
    from desktop.tools.toolbox import ToolBox

__all__ = ["ModelDirectory", "RequestInfo", "ResolverDirectory", "Services", "create_app"]


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
