"""The types the server's modules share: what the routes are given and learn per request.

Imports nothing else from ``desktop.server`` at run time, so the app factory, the routes
and the streaming helpers can all depend on it without depending on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from starlette.types import ASGIApp

from desktop.base.audit import Auditor, NoAudit
from desktop.base.config import ServerSettings
from desktop.engine import DEFAULT_LIMITS, ImageLimits
from desktop.store import ResponseStore

if TYPE_CHECKING:  # annotations only: these modules never import this one's importers
    from desktop.engine import Scheduler
    from desktop.server._cache import LRUCache
    from desktop.server._metrics import AccessLog, Metrics
    from desktop.server._security import KeyStore, RateLimiter
    from desktop.store import UsageRow
    from desktop.tools import ServerList, ToolBox


class ModelFacts(TypedDict, total=False):
    """Header facts about a model (a remote one has only ``kind`` and ``remote``)."""

    kind: str
    remote: str
    architecture: str
    parameters: int
    file_bytes: int
    context_length: int
    embedding_length: int
    block_count: int
    file_type: str | None
    chat_template: str | None
    reasoning: bool
    vision: bool
    modified: float


class ModelDirectory(Protocol):
    """The models the server may answer with, by their stable ids."""

    def ids(self) -> list[str]:
        """Every id a request may name."""
        ...

    def has(self, model: str) -> bool:
        """Whether ``model`` is among ``ids()`` (asked on every request, so kept cheap)."""
        ...

    def kind(self, model: str) -> tuple[str, int | None]:
        """What ``model`` is (chat, embedding, reranker) and its GGUF pooling type, if any."""
        ...

    def describe(self, model: str) -> ModelFacts:
        """Header facts about ``model`` (kind, architecture, sizes, template), not loading it."""
        ...

    def vision(self, model: str) -> bool:
        """Whether pictures may be sent to ``model`` (a local model with a vision
        projector, or a remote one: its server decides); raises the EdgeDeskError that
        keeps it from resolving."""
        ...


class UsageSink(Protocol):
    """Where the guard hands each finished request's usage row (``UsageRecorder``)."""

    def record(self, row: UsageRow) -> None:
        """Take one row without blocking the request."""
        ...


@dataclass
class RequestInfo:
    """What the routes learn about a request, for the access log and metrics."""

    request_id: str
    started: float
    key_name: str | None = None
    key_owner: str | None = None  # the key's identity (``security.owner_of``), not its name
    key_created: float = 0.0  # when the key was made (what its name stored since is its)
    key_models: tuple[str, ...] | None = None  # the key's model scope (None: any model)
    key_endpoints: tuple[str, ...] | None = None  # the key's endpoint scope (None: any)
    # The one document collection the key may read (--read-only-docs; None: any).
    key_collection: str | None = None
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0  # of tokens_in, served from a kept prefix
    ttft_s: float | None = None
    # Why a streamed answer failed after its 200 status went out (``generation.guarded``):
    # the status cannot say so, the access log's ``error`` does. None: it did not fail.
    error: str | None = None
    # The error code and type of a refusal or failure (``context_length_exceeded``,
    # ``invalid_request_error``…), for the access log: never the request's content.
    error_code: str | None = None
    error_type: str | None = None
    # Tools left out of the prompt (``leniency``): the response header names them.
    dropped_tools: list[str] = field(default_factory=list)


@dataclass
class Services:
    """Everything the routes use, hung on ``app.state.services``: built once per server by
    ``desktop.server._asgi.services_for`` and handed whole to the runner and the app."""

    scheduler: Scheduler
    models: ModelDirectory
    settings: ServerSettings
    keys: KeyStore | None
    access_log: AccessLog
    metrics: Metrics
    bound_host: str
    limiter: RateLimiter
    # Whole deterministic answers: each the JSON body that was sent (any JSON values).
    response_cache: LRUCache[dict[str, Any]] | None
    embeddings: LRUCache[list[float]]
    allowed: frozenset[str] = field(default_factory=frozenset)
    # Responses API responses kept with ``store: true`` (a no-op store: refused).
    response_store: ResponseStore = field(default_factory=lambda: ResponseStore(None))
    tool_servers: ServerList | None = None  # MCP servers a request may name (policy applies)
    toolbox: ToolBox | None = None  # runs a request's MCP servers (None: refused)
    audit: Auditor = field(default_factory=NoAudit)
    image_limits: ImageLimits = DEFAULT_LIMITS  # caps on one picture (policy ImageMaxMB, …)
    mcp: ASGIApp | None = None  # /mcp: EdgeDesk's documents as an MCP server (None: 404)
    usage: UsageSink | None = None  # each request's content-free row (None: not collected)
