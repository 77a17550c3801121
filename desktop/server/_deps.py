"""What every route is given (FastAPI dependencies): the services and the request's call.

A route names ``ServicesDep`` when it only reads the server's services, and ``CallDep``
when it answers for a model: the call carries the request, its bookkeeping
(``RequestInfo``, filled by the guard in ``app.py``), the cancel event the generation
pipeline sets when the client leaves, and the checks every model request passes.
The dependencies are ``async`` so they run on the event loop, not a worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, TypeVar

import anyio
from fastapi import Depends, Request

from desktop.base.errors import ModelNotAllowed, ModelNotFound
from desktop.server._pump import watch_disconnect
from desktop.server._request_parts import Limits
from desktop.server._services import RequestInfo, Services
from desktop.server._token_count import CHECK_PIECE_CHARS, refuse_over_context

T = TypeVar("T")


def check_model(services: Services, info: RequestInfo, model: str) -> None:
    """Note ``model`` for the access log; 403 when the key may not use it, 404 when absent."""
    info.model = model[:200]
    if info.key_models is not None and model not in info.key_models:
        raise ModelNotAllowed(
            f"the API key '{info.key_name}' may not use the model "
            f"'{model}'; it may use: {', '.join(info.key_models)}",
            param="model",
        )
    if not services.models.has(model):
        ids = services.models.ids()
        shown = ", ".join(ids) or "none; start the server with --model"
        raise ModelNotFound(
            f"the model '{model}' does not exist here; available: {shown}", param="model"
        )


def visible(info: RequestInfo, models: Iterable[str]) -> list[str]:
    """The ``models`` the request's key may use, in order: a scoped key's listings
    (``/v1/models``, ``/api/tags``, ``/metrics``) name only those, as OpenAI's project
    keys do; an unscoped key (or no key) sees them all."""
    allowed = info.key_models
    return [m for m in models if allowed is None or m in allowed]


def may_chat(info: RequestInfo) -> bool:
    """Whether the request's key may use the chat endpoints (a chat template is theirs)."""
    return info.key_endpoints is None or "chat" in info.key_endpoints


@dataclass
class Call:
    """One API request that runs a model: what it may use and how it is stopped."""

    request: Request
    services: Services
    info: RequestInfo
    # Set when the client goes away (or the stream ends early): the engine stops within
    # a token and a request still waiting leaves the scheduler's line.
    cancel: threading.Event = field(default_factory=threading.Event)

    def check_model(self, model: str) -> None:
        """Note ``model``; refuse it when the key may not use it or it is not served."""
        check_model(self.services, self.info, model)

    async def compute(self, work: Callable[[threading.Event], T]) -> T:
        """``work(cancel)`` on a worker thread; the client leaving meanwhile sets
        ``cancel`` (embeddings and rerank stop between decodes, not minutes later)."""
        return await watch_disconnect(
            self.request, self.cancel, lambda: anyio.to_thread.run_sync(work, self.cancel)
        )

    async def refuse_over_context(
        self, model: str, texts: Iterable[str], context: int | None = None
    ) -> None:
        """Refuse a prompt whose longest of ``texts`` (each held whole by the prompt) is
        far over ``model``'s context before it takes a slot: ContextOverflow after about a
        context's worth of tokenizing (``token_count.refuse_over_context``). Texts of
        ``2 * CHECK_PIECE_CHARS`` or less are never checked here."""
        longest = max(texts, key=len, default="")
        if len(longest) <= 2 * CHECK_PIECE_CHARS:
            return
        scheduler = self.services.scheduler
        await self.compute(
            lambda cancel: scheduler.with_engine(
                model, lambda e: refuse_over_context(e, longest, context, cancel), cancel
            )
        )

    @property
    def limits(self) -> Limits:
        """The server's caps on one generation (max tokens, time)."""
        settings = self.services.settings
        return Limits(max_tokens=settings.max_tokens_limit, timeout_s=settings.generation_timeout_s)


async def services(request: Request) -> Services:
    """The server's services (``app.state.services``)."""
    found: Services = request.app.state.services
    return found


async def call(request: Request) -> Call:
    """The request's ``Call``: its services, its bookkeeping, a fresh cancel event."""
    info: RequestInfo = request.state.edgedesk
    return Call(request, request.app.state.services, info)


ServicesDep = Annotated[Services, Depends(services)]
CallDep = Annotated[Call, Depends(call)]
