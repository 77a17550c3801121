"""``create_app``: the ASGI app, built from its dependencies (no globals).

Every request passes one guard (``guard.Guard``: request id, Host check, key, rate limit,
body limit, access log and metrics) before the routes; every error leaves in the shape
of the protocol its route speaks (``error_responses``: OpenAI's; Anthropic's under
``/v1/messages``; Ollama's under ``/api/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp

from desktop.base.audit import Auditor, NoAudit
from desktop.base.config import ServerSettings
from desktop.engine import DEFAULT_LIMITS, ImageLimits
from desktop.server._cache import LRUCache
from desktop.server._error_responses import install_error_handlers
from desktop.server._guard import Guard, known_routes
from desktop.server._leniency import CONTEXT_HEADER, DROPPED_TOOLS_HEADER
from desktop.server._metrics import AccessLog, Metrics
from desktop.server._security import KeyStore, RateLimiter, allowed_hosts, check_bind
from desktop.server._services import ModelDirectory, RequestInfo, Services, UsageSink
from desktop.store import ResponseStore

if TYPE_CHECKING:
    from desktop.engine import Scheduler
    from desktop.tools import ServerList, ToolBox

__all__ = ["ModelDirectory", "RequestInfo", "Services", "create_app", "services_for"]


def services_for(
    scheduler: Scheduler,
    models: ModelDirectory,
    settings: ServerSettings,
    keys: KeyStore | None,
    *,
    access_log: AccessLog | None = None,
    metrics: Metrics | None = None,
    bound_host: str | None = None,
    extra_hosts: tuple[str, ...] = (),
    response_store: ResponseStore | None = None,
    mcp: ASGIApp | None = None,
    tool_servers: ServerList | None = None,
    audit: Auditor | None = None,
    toolbox: ToolBox | None = None,
    image_limits: ImageLimits = DEFAULT_LIMITS,
    usage: UsageSink | None = None,
) -> Services:
    """One server's services from its dependencies; ``keys=None`` means no auth.

    What the settings derive (the rate limiter, the caches, the allowed Host names) is
    made here. ``response_store`` keeps Responses API responses (None: ``store: true``
    is refused); ``mcp`` serves ``/mcp`` behind the same key; ``image_limits`` caps every
    picture a request sends; ``usage`` takes each finished request's usage row (None:
    usage is not collected). ConfigError when the bind is unsafe without keys.
    """
    host = bound_host or settings.host
    check_bind(host, keys is not None)
    return Services(
        scheduler=scheduler,
        models=models,
        settings=settings,
        keys=keys,
        access_log=access_log or AccessLog(None),
        metrics=metrics or Metrics(),
        bound_host=host,
        limiter=RateLimiter(settings.requests_per_minute, settings.tokens_per_minute),
        response_cache=LRUCache(settings.cache_entries) if settings.response_cache else None,
        embeddings=LRUCache(settings.cache_entries * 16),
        allowed=allowed_hosts(host, extra_hosts),
        response_store=response_store or ResponseStore(None),
        tool_servers=tool_servers,
        audit=audit or NoAudit(),
        toolbox=toolbox,
        image_limits=image_limits,
        mcp=mcp,
        usage=usage,
    )


def create_app(services: Services) -> FastAPI:
    """The ASGI app serving every protocol's routes over ``services`` (``services_for``)."""
    from desktop.server._protocols.anthropic.routes import router as anthropic_router
    from desktop.server._protocols.ollama.routes import router as ollama_router
    from desktop.server._protocols.openai.routes import router as openai_router
    from desktop.server._protocols.responses.routes import router as responses_router

    settings = services.settings
    app = FastAPI(
        title="EdgeDesk local OpenAI-compatible API", version="1", docs_url=None, redoc_url=None
    )
    app.state.services = services
    routers = (openai_router, responses_router, anthropic_router, ollama_router)
    for router in routers:
        app.include_router(router)
    served = [route for router in routers for route in router.routes]
    if services.mcp is not None:
        served.append(Route("/mcp", endpoint=services.mcp, methods=["GET", "POST", "DELETE"]))
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
