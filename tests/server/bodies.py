"""Request bodies as the routes read them: validated into the protocol's typed request,
a validation error raised as the 400 a client gets (its ``param`` and message), so a
translation test checks what a client would hear."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from desktop.base.errors import InvalidRequest
from desktop.engine._types import Message, ToolSpec
from desktop.server._error_responses import invalid_value
from desktop.server._protocols.anthropic import requests as ar
from desktop.server._protocols.anthropic import translate as at
from desktop.server._protocols.ollama import requests as orq
from desktop.server._protocols.ollama import translate as ot
from desktop.server._protocols.responses import requests as rr
from desktop.server._protocols.responses import translate as rt

M = TypeVar("M", bound=BaseModel)


def parsed(model: type[M], body: dict[str, Any]) -> M:
    """``body`` as ``model``, or the InvalidRequest the route answers it with."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        param, message = invalid_value(exc.errors())
        raise InvalidRequest(message, param=param) from None


def anthropic_messages(system: Any, messages: list[Any], **options: Any) -> list[Message]:
    """Anthropic's ``system`` and ``messages`` as the route reads and translates them."""
    req = parsed(ar.CountTokensRequest, {"model": "m", "system": system, "messages": messages})
    return at.to_messages(req.system, req.messages, **options)


def ollama_messages(messages: list[Any], **options: Any) -> list[Message]:
    """Ollama's chat ``messages`` as the route reads and translates them."""
    return ot.to_messages(
        parsed(orq.ChatRequest, {"model": "m", "messages": messages}).messages, **options
    )


def ollama_tools(tools: list[Any]) -> tuple[ToolSpec, ...] | None:
    """Ollama's ``tools`` as the route reads and translates them."""
    return ot.tools_for_engine(parsed(orq.ChatRequest, {"model": "m", "tools": tools}).tools)


def responses_messages(
    instructions: str | None, items: list[Any], *args: Any, **options: Any
) -> list[Message]:
    """A Responses ``input`` (items) as the route reads and translates it."""
    req = parsed(rr.ResponsesRequest, {"model": "m", "input": items})
    return rt.to_messages(instructions, rt.input_items(req.input), *args, **options)
