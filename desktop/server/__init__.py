"""The local OpenAI-compatible HTTP API: safe by default, fair under load.

This module is the server's face: ``__all__`` below is everything code outside
``desktop/server/`` may use (an import-linter contract in pyproject.toml holds it:
"Outside desktop.server, only its face is imported"). What starts with ``_`` is the
server's insides, free to change: ``_runner`` (uvicorn on a thread), ``_asgi`` (the
app), ``_generation`` and ``_pump`` (the one pipeline every protocol's answer runs
through), ``_security`` (keys and scopes), ``_metrics`` (the access log), ``_mcp/``
(EdgeDesk's documents as an MCP server, hosted MCP tools), and ``_protocols/``: one
folder per wire protocol (openai, anthropic, responses, ollama), each with its
``requests`` (typed bodies), ``translate`` (request → engine call), its answers and
its ``routes``.

Importing this package does nothing else: each name is imported from its module when
first used (a module ``__getattr__``), so ``import desktop.server`` loads neither
uvicorn nor starlette. The ``TYPE_CHECKING`` block shows mypy and readers where each
name lives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.server._asgi import services_for
    from desktop.server._client_setups import KEY as SETUP_KEY
    from desktop.server._client_setups import MODEL as SETUP_MODEL
    from desktop.server._client_setups import python_openai as python_openai_setup
    from desktop.server._client_setups import setups as client_setups
    from desktop.server._client_setups import with_context as setup_with_context
    from desktop.server._image_parts import check_images, image_from_bytes
    from desktop.server._image_parts import joined as marked_content
    from desktop.server._mcp.documents_server import McpEndpoint, document_server
    from desktop.server._metrics import AccessLog, AccessRecord
    from desktop.server._model_directory import ResolverDirectory
    from desktop.server._runner import ACCESS_LOG_FILE, ServerRunner, key_store
    from desktop.server._security import (
        DAY_S,
        ENDPOINTS,
        KeyInfo,
        KeyScope,
        KeyStore,
        parse_duration,
        parse_rate,
    )

__all__ = [
    "ACCESS_LOG_FILE",
    "DAY_S",
    "ENDPOINTS",
    "SETUP_KEY",
    "SETUP_MODEL",
    "AccessLog",
    "AccessRecord",
    "KeyInfo",
    "KeyScope",
    "KeyStore",
    "McpEndpoint",
    "ResolverDirectory",
    "ServerRunner",
    "check_images",
    "client_setups",
    "document_server",
    "image_from_bytes",
    "key_store",
    "marked_content",
    "parse_duration",
    "parse_rate",
    "python_openai_setup",
    "services_for",
    "setup_with_context",
]

# Each name of the face: the inner module (below ``desktop.server``) that defines it, and
# its name there where the face gives it a clearer one.
_WHERE: dict[str, str | tuple[str, str]] = {
    "services_for": "_asgi",
    "SETUP_KEY": ("_client_setups", "KEY"),
    "SETUP_MODEL": ("_client_setups", "MODEL"),
    "python_openai_setup": ("_client_setups", "python_openai"),
    "client_setups": ("_client_setups", "setups"),
    "setup_with_context": ("_client_setups", "with_context"),
    "check_images": "_image_parts",
    "image_from_bytes": "_image_parts",
    "marked_content": ("_image_parts", "joined"),
    "McpEndpoint": "_mcp.documents_server",
    "document_server": "_mcp.documents_server",
    "AccessLog": "_metrics",
    "AccessRecord": "_metrics",
    "ResolverDirectory": "_model_directory",
    "ACCESS_LOG_FILE": "_runner",
    "ServerRunner": "_runner",
    "key_store": "_runner",
    "DAY_S": "_security",
    "ENDPOINTS": "_security",
    "KeyInfo": "_security",
    "KeyScope": "_security",
    "KeyStore": "_security",
    "parse_duration": "_security",
    "parse_rate": "_security",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
