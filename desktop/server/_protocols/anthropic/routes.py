"""``/v1/messages`` and ``/v1/messages/count_tokens``: Anthropic's Messages API.

Read as ``requests`` and translated by ``translate`` into the chat route's engine
request, run through the one generation pipeline (``_generation.py``); ``MessageAnswer``
renders the answer as Anthropic's events (``events``) or message object. Errors leave in
Anthropic's shape (the app's error handlers pick it by path). Keys come as ``x-api-key``
or Bearer; the ``anthropic-version`` and ``anthropic-beta`` headers are accepted and not
needed.
"""

from __future__ import annotations

import json
import secrets
import threading
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.chat import ToolStep
from desktop.engine import ChatCall, Delta, Engine, ToolCall
from desktop.server import _image_parts as images
from desktop.server import _leniency as leniency
from desktop.server._answer import Ending, WholeAnswer
from desktop.server._deps import CallDep
from desktop.server._generation import SSE, generate_chat
from desktop.server._mcp import hosted as hosted_mcp
from desktop.server._protocols.anthropic import translate
from desktop.server._protocols.anthropic.events import (
    Block,
    MessageEvents,
    content_blocks,
    message_object,
)
from desktop.server._protocols.anthropic.requests import (
    CountTokensRequest,
    McpServer,
    MessagesRequest,
)
from desktop.server._services import Services
from desktop.server._strict_json import StrictJSONRoute
from desktop.server._token_count import PIECE_CHARS, count_prompt_tokens
from desktop.tools import ToolSet

router = APIRouter(route_class=StrictJSONRoute)

# The most text one count_tokens request may hold (docs/api.md): ~256k tokens of prose,
# more than any local model's context. Checked before rendering or tokenizing: an 8 MB
# body once took 87 s of CPU on Gemma 3 270M's tokenizer; 1 MiB takes a few seconds,
# counted in pieces so that a client leaving stops it (token_count.py).
MAX_COUNT_CHARS = 1_048_576


class MessageAnswer(MessageEvents):
    """One message's answer: Anthropic's event stream (``MessageEvents``), or the whole
    ``message`` object; with hosted MCP tools, each round's ``mcp_tool_use`` /
    ``mcp_tool_result`` blocks."""

    media_type = SSE

    def __init__(
        self,
        body: MessagesRequest,
        max_tokens: int | None,
        hosting: hosted_mcp.Hosted | None,
    ) -> None:
        super().__init__(
            "msg_" + secrets.token_hex(12), body.model, body.stop_sequences, max_tokens=max_tokens
        )
        self._body, self._hosting = body, hosting

    def error_event(self, error: EdgeDeskError) -> bytes:
        """Anthropic's ``error`` event, typed by the error's status."""
        return MessageEvents.failed(error.message, error.http_status)

    def finished(self) -> None:
        """Nothing to do once the answer is out."""

    def _message(
        self, content: list[Block], calls: tuple[ToolCall, ...], final: Delta
    ) -> JSONResponse:
        return JSONResponse(
            message_object(
                message_id=self._id,
                model=self._body.model,
                content=content,
                stop=Ending(calls, final).stop,
                usage=final.usage,
                final=final,
                requested_stops=self._body.stop_sequences,
                max_tokens=self._max_tokens,
            )
        )

    def whole(self, answer: WholeAnswer) -> JSONResponse:
        """The ``message`` object: thinking, text and tool_use blocks."""
        content, calls = answer.split()
        return self._message(content_blocks(answer.reasoning, content, calls), calls, answer.final)

    def listed(self, tools: ToolSet) -> bytes:
        """Nothing: the Messages API does not say which tools a server listed."""
        return b""

    def step(self, step: ToolStep, tools: ToolSet, first: int) -> bytes:
        """The round's ``mcp_tool_use`` and ``mcp_tool_result`` blocks (its words went out)."""
        assert self._hosting is not None
        blocks = hosted_mcp.anthropic_blocks(
            self._id, self._hosting, tools, ToolStep("", "", step.calls, step.results), first
        )
        return b"".join(self.whole_block(block) for block in blocks)

    def whole_hosted(self, answer: hosted_mcp.Collected) -> JSONResponse:
        """The ``message`` object: each round's words and blocks, then the answer's own."""
        assert self._hosting is not None
        content: list[Block] = []
        made = 0
        for step in answer.steps:
            content += hosted_mcp.anthropic_blocks(
                self._id, self._hosting, answer.tools, step, made
            )
            made += len(step.calls)
        content += [
            b
            for b in content_blocks(answer.reasoning, answer.text, ())
            if b.get("type") != "text" or answer.text or not content
        ]
        return self._message(content, (), answer.final)


def _hosting(servers: list[McpServer] | None, services: Services) -> hosted_mcp.Hosted | None:
    """The request's ``mcp_servers`` EdgeDesk runs, or a 400 naming what refuses one."""
    if not servers:
        return None
    return hosted_mcp.hosted(
        [(s.name, s.url) for s in servers],
        services.tool_servers,
        services.toolbox,
        "mcp_servers",
    )


@router.post("/v1/messages")
async def create_message(body: MessagesRequest, call: CallDep) -> Any:
    """Anthropic Messages: whole or streamed."""
    services, info = call.services, call.info
    hosting = _hosting(body.mcp_servers, services)
    translate.refuse_unsupported(body)
    call.check_model(body.model)
    messages = translate.to_messages(body.system, body.messages, limits=services.image_limits)
    images.check_images(messages, model=body.model, sees=services.models.vision)
    info.dropped_tools = leniency.labels(
        [h for h in translate.left_out_tools(body) if hosting is None or h.kind != "mcp_servers"]
    )
    chat = translate.chat_call(body, messages, call.limits)
    hosted_mcp.alone(hosting, chat.tools, "client tools and mcp_servers")
    return await generate_chat(
        call,
        MessageAnswer(body, chat.params.max_tokens, hosting),
        hosting,
        streamed=bool(body.stream),
        model=body.model,
        chat=chat,
    )


# Text a chat may hold to be counted in one engine call: its rendered prompt is then well
# within one piece of count_prompt_tokens, which is counted in one call anyway.
ONE_CALL_CHARS = PIECE_CHARS // 4


def _text_chars(chat: ChatCall) -> int:
    """The characters of text a prompt is rendered from: messages, tool calls and tools."""
    chars = sum(
        len(m.content)
        + len(m.reasoning or "")
        + sum(len(c.name) + len(c.arguments) for c in m.tool_calls)
        for m in chat.messages
    )
    tools = chat.openai_tools()
    return chars + (len(json.dumps(tools)) if tools else 0)


def check_count_size(chat: ChatCall) -> None:
    """Refuse a count_tokens request over MAX_COUNT_CHARS (InvalidRequest, 400) before any
    tokenizing."""
    chars = _text_chars(chat)
    if chars > MAX_COUNT_CHARS:
        raise InvalidRequest(
            f"the request holds {chars} characters of text; count_tokens counts at most "
            f"{MAX_COUNT_CHARS} (more than any served model's context); count a shorter "
            "conversation",
            param="messages",
        )


def _count(services: Services, model: str, chat: ChatCall, *, cancel: threading.Event) -> int:
    return services.scheduler.with_engine(
        model, lambda engine: prompt_token_count(engine, chat, cancel), cancel
    )


def prompt_token_count(
    engine: Engine, chat: ChatCall, cancel: threading.Event | None = None
) -> int:
    """The prompt tokens ``engine`` will read for this chat, each picture's tokens included
    (the rendered text holds one marker where the engine reads a picture's whole run).

    Text is tokenized in pieces (``token_count``): ``cancel`` set (the client left) stops
    the count between pieces (Cancelled). With pictures it is one call, bounded by their
    limits.
    """
    counter = getattr(engine, "count_chat_tokens", None)
    if counter is not None and (
        any(m.images for m in chat.messages) or _text_chars(chat) <= ONE_CALL_CHARS
    ):
        # One engine call (a round trip to the model's worker) where render and then
        # tokenize would be two: the same count for a prompt of one piece (issue 47).
        return int(counter(chat))
    return count_prompt_tokens(engine, engine.render(chat), cancel)


@router.post("/v1/messages/count_tokens")
async def count_tokens(body: CountTokensRequest, call: CallDep) -> JSONResponse:
    """The prompt's token count under the model's own chat template (nothing generated)."""
    services, info = call.services, call.info
    _hosting(body.mcp_servers, services)  # counted only when they could run (not their tools)
    translate.refuse_unsupported(body)
    call.check_model(body.model)
    messages = translate.to_messages(body.system, body.messages, limits=services.image_limits)
    images.check_images(messages, model=body.model, sees=services.models.vision)
    info.dropped_tools = leniency.labels(translate.left_out_tools(body))
    chat = translate.count_call(body, messages)
    check_count_size(chat)
    # Its client leaving sets call.cancel: the count stops before its next piece.
    tokens = await call.compute(lambda cancel: _count(services, body.model, chat, cancel=cancel))
    return JSONResponse({"input_tokens": tokens})  # nothing generated: not charged
