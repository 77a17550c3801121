"""Every error the server sends, in the shape of the protocol its route speaks.

OpenAI's by default, Anthropic's under ``/v1/messages``, Ollama's under ``/api/``.
``install_error_handlers`` turns EdgeDesk's own errors, invalid bodies, unknown routes
and bugs into them, and notes each code and type for the access log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from desktop.base.errors import EdgeDeskError, QueueFull

# Anthropic's error types by status (their SDK raises by status; the body names the type).
from desktop.server._protocols.anthropic.events import ERROR_TYPES as _ANTHROPIC_TYPES
from desktop.server._protocols.openai.events import error_body
from desktop.server._services import RequestInfo

log = logging.getLogger("edgedesk.server")


def error_payload(
    path: str, status: int, message: str, *, type_: str, code: str | None, param: str | None = None
) -> dict[str, Any]:  # three protocols' JSON shapes
    """An error body in the shape the route's own clients parse."""
    if path.startswith("/v1/messages"):
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
        }
    if path.startswith("/api/"):
        return {"error": message}
    return error_body(message, type_=type_, code=code, param=param)


def error_response(
    status: int,
    message: str,
    type_: str,
    code: str,
    *,
    param: str | None = None,
    headers: dict[str, str] | None = None,
    path: str = "",
) -> JSONResponse:
    """An error response for ``path`` in its protocol's shape (``error_payload``)."""
    return JSONResponse(
        error_payload(path, status, message, type_=type_, code=code, param=param),
        status_code=status,
        headers=headers,
    )


def _noted(request: Request, code: str, type_: str, tokens_in: int | None = None) -> None:
    """Keep a refusal's code and type (and the tokens counted) for the access log."""
    info = getattr(request.state, "edgedesk", None)
    if isinstance(info, RequestInfo):
        info.error_code, info.error_type = code, type_
        if tokens_in is not None:
            info.tokens_in = tokens_in


def _counted(exc: EdgeDeskError) -> int | None:
    """The prompt tokens an error counted before it refused (a context overflow's)."""
    value = exc.params.get("prompt_tokens")
    return int(value) if value is not None and value.isdigit() else None


# The tags pydantic puts in an error's location for a plain union member (``str``).
_UNION_TAGS = frozenset({"str", "int", "float", "bool"})


def _most_telling(errors: Sequence[Any]) -> dict[str, Any]:  # pydantic's error dicts
    """The error to report: the first, unless a later one on the same field says what is
    wrong with the value rather than that it is not some union member's type (``input:
    [1e20]`` is "exceeded maximum size" as a token id, not "not a string")."""
    if not errors:
        return {"msg": "invalid request", "loc": ()}
    first: dict[str, Any] = errors[0]  # loc, msg, type, ctx: as pydantic made them
    field = tuple(first.get("loc", ()))[:2]
    for error in errors:
        kind = str(error.get("type", ""))
        if tuple(error.get("loc", ()))[:2] == field and not kind.endswith("_type"):
            return dict(error)
    return first


def invalid_value(errors: Sequence[Any]) -> tuple[str | None, str]:
    """The ``param`` and message a body that fails validation is refused with: the most
    telling error, where it is as a dotted path (``messages.0.content.1.text``)."""
    first = _most_telling(errors)
    loc = [str(p) for p in first.get("loc", ()) if p != "body" and p not in _UNION_TAGS]
    # A union member's tag (list[int], a content block's block[text]…) is not a place.
    loc = [p for p in loc if "[" not in p]
    param = ".".join(loc) or None
    return param, (f"'{param}': " if param else "") + str(first["msg"])


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error ``app`` raises in the shape of the protocol its route speaks."""

    @app.exception_handler(EdgeDeskError)
    async def _edgedesk(request: Request, exc: EdgeDeskError) -> JSONResponse:
        headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, QueueFull) else None
        status = exc.http_status if exc.http_status != 499 else 400
        _noted(request, exc.code, exc.error_type, _counted(exc))
        return error_response(
            status,
            exc.message,
            exc.error_type,
            exc.code,
            param=exc.param,
            headers=headers,
            path=request.url.path,
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        path = request.url.path
        first = _most_telling(exc.errors())
        if first.get("type") == "json_invalid":
            ctx = first.get("ctx")
            why = ctx.get("error", first["msg"]) if isinstance(ctx, dict) else first["msg"]
            _noted(request, "invalid_json", "invalid_request_error")
            return error_response(
                400,
                f"invalid JSON in the request body ({why})",
                "invalid_request_error",
                "invalid_json",
                path=path,
            )
        param, message = invalid_value(exc.errors())
        _noted(request, "invalid_value", "invalid_request_error")
        return error_response(
            400,
            message,
            "invalid_request_error",
            "invalid_value",
            param=param,
            path=path,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        _noted(request, code, "invalid_request_error")
        return error_response(
            exc.status_code,
            str(exc.detail),
            "invalid_request_error",
            code,
            headers=dict(exc.headers or {}),
            path=request.url.path,
        )

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in %s", request.url.path, exc_info=exc)
        _noted(request, "internal_error", "server_error")
        return error_response(
            500,
            f"internal error ({type(exc).__name__}); see the server log",
            "server_error",
            "internal_error",
            path=request.url.path,
        )
