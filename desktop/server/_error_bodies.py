"""The error body of the OpenAI-shaped routes (OpenAI's and the Responses API's), typed.

``{"error": {"message", "type", "param", "code"}}`` is what OpenAI's clients parse; both
OpenAI protocols document it in the OpenAPI schema through ``ERROR_RESPONSES``.
Anthropic's and Ollama's shapes are written by ``desktop.server._error_responses``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ErrorDetail(BaseModel):
    """What went wrong, in OpenAI's shape."""

    model_config = ConfigDict(extra="forbid")

    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    """Every OpenAI-shaped error answer: ``{"error": {...}}``."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorDetail


# The error statuses the OpenAI-shaped routes document in the OpenAPI schema (FastAPI's
# ``responses=`` type: OpenAPI fields of any kind).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 413, 422, 429, 503)
}
