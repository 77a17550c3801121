"""``/v1/messages`` and ``/v1/messages/count_tokens``: Anthropic's Messages API.

Translated by ``anthropic_wire`` into the chat route's engine request and run through
the same queue, pump and cancel-on-disconnect; errors leave in Anthropic's shape (the
app's error handlers pick it by path). Keys come as ``x-api-key`` or Bearer; the
``anthropic-version`` and ``anthropic-beta`` headers are accepted and not needed.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from desktop.chat.conversation import ToolStep
from desktop.engine.protocol import Engine
from desktop.engine.types import Message
from desktop.errors import EdgeDeskError, InvalidRequest
from desktop.server import anthropic_events as ae
from desktop.server import anthropic_wire as aw
from desktop.server import hosted_mcp as hm
from desktop.server import images as im
from desktop.server import leniency as lv
from desktop.server.blocks import Ending, Piece, block_stream, guarded, whole_answer
from desktop.server.routes import _check_model, _info, _limits, _services
from desktop.server.services import Services
from desktop.server.streaming import Chunks, drain, start_stream, watch_disconnect
from desktop.tools.toolbox import ToolSet

router = APIRouter()


def _failed(error: EdgeDeskError) -> bytes:
    return ae.MessageEvents.failed(error.message, error.http_status)


@router.post("/v1/messages")
async def create_message(body: aw.MessagesRequest, request: Request) -> Any:
    """Anthropic Messages: whole or streamed."""
    svc, info = _services(request), _info(request)
    # Hosted MCP: run here when allowed and configured, else a 400 naming what refuses.
    hosting = hm.hosted(_named(body.mcp_servers), svc.tool_servers, svc.toolbox,
                        "mcp_servers") if body.mcp_servers else None
    aw.refuse_unsupported(body)
    _check_model(svc, info, body.model)
    messages = aw.to_messages(body.system, body.messages)
    im.check_images(messages, model=body.model, sees=svc.models.vision)
    info.dropped_tools = lv.labels([h for h in aw.left_out_tools(body)
                                    if hosting is None or h.kind != "mcp_servers"])
    tools = aw.tools_for_engine(body)
    params = aw.generation_params(body, _limits(svc), tools)
    cancel = threading.Event()
    if hosting is not None:
        if tools:
            raise InvalidRequest("client tools and mcp_servers in one request are not "
                                 "supported here; send one kind", param="tools")
        loop = hm.run(hm.Counted(svc.scheduler, lambda s: Chunks(s, info)), hosting.toolbox,
                      body.model, messages, params=params,
                      template_kwargs=aw.template_kwargs(body), cancel=cancel)
        return await _hosted_answer(request, body, hosting, loop,
                                    max_tokens=params.max_tokens, cancel=cancel)
    chunks = Chunks(svc.scheduler.stream_chat(body.model, messages, params, cancel, tools,
                                              template_kwargs=aw.template_kwargs(body)), info)
    message_id = "msg_" + secrets.token_hex(12)
    if body.stream:
        events = ae.MessageEvents(message_id, body.model, body.stop_sequences,
                                  max_tokens=params.max_tokens)
        return await start_stream(request, guarded(block_stream(
            chunks, tools, forced=aw.is_forced(body), events=events), _failed, info=info),
            cancel)
    text, reasoning, final, _ = await watch_disconnect(
        request, cancel, lambda: anyio.to_thread.run_sync(drain, chunks))
    content, calls = whole_answer(text, tools)
    return JSONResponse(ae.message_object(
        message_id=message_id, model=body.model,
        content=ae.content_blocks(reasoning, content, calls),
        stop=Ending(calls, final).stop, usage=final.usage, final=final,
        requested_stops=body.stop_sequences, max_tokens=params.max_tokens))


def _named(servers: list[dict[str, Any]]) -> list[tuple[object, object]]:
    return [(s.get("name"), s.get("url")) for s in servers]


def _hosted_events(events: ae.MessageEvents, message_id: str, hosting: hm.Hosted,
                   loop: Iterator[hm.Event]) -> Iterator[bytes]:
    """A streamed hosted-MCP message: the words, each round's use and result blocks."""
    tools = ToolSet()
    made = 0
    for event in loop:
        if isinstance(event, ToolSet):
            tools = event
            yield events.opening()
        elif isinstance(event, ToolStep):
            # The round's words already went out as a text block: only its calls now.
            blocks = hm.anthropic_blocks(message_id, hosting, tools,
                                         ToolStep("", "", event.calls, event.results), made)
            made += len(event.calls)
            yield b"".join(events.whole_block(block) for block in blocks)
        elif event.is_final:
            yield events.ending(Ending((), event))
        else:
            yield events.piece(Piece("reasoning", event.reasoning)) + \
                events.piece(Piece("text", event.text))


async def _hosted_answer(request: Request, body: aw.MessagesRequest, hosting: hm.Hosted,
                         loop: Iterator[hm.Event], *, max_tokens: int | None,
                         cancel: threading.Event) -> Any:
    """A message whose MCP tools EdgeDesk ran, whole or streamed."""
    message_id = "msg_" + secrets.token_hex(12)
    if body.stream:
        events = ae.MessageEvents(message_id, body.model, body.stop_sequences,
                                  max_tokens=max_tokens)
        return await start_stream(request, guarded(_hosted_events(
            events, message_id, hosting, loop), _failed, info=_info(request)), cancel)
    got = await watch_disconnect(request, cancel,
                                 lambda: anyio.to_thread.run_sync(hm.collect, loop))
    content: list[dict[str, Any]] = []
    made = 0
    for step in got.steps:
        content += hm.anthropic_blocks(message_id, hosting, got.tools, step, made)
        made += len(step.calls)
    content += [b for b in ae.content_blocks(got.reasoning, got.text, ())
                if b.get("type") != "text" or got.text or not content]
    return JSONResponse(ae.message_object(
        message_id=message_id, model=body.model, content=content,
        stop=Ending((), got.final).stop, usage=got.final.usage, final=got.final,
        requested_stops=body.stop_sequences, max_tokens=max_tokens))


def _count(svc: Services, model: str, messages: Sequence[Message],
           tools: list[dict[str, Any]] | None, kwargs: dict[str, Any] | None) -> int:
    def work(engine: Engine) -> int:
        return len(engine.prompt_tokens(engine.render(messages, tools, kwargs)))
    return svc.scheduler.with_engine(model, work)


@router.post("/v1/messages/count_tokens")
async def count_tokens(body: aw.CountTokensRequest, request: Request) -> JSONResponse:
    """The prompt's token count under the model's own chat template (nothing generated)."""
    svc, info = _services(request), _info(request)
    if body.mcp_servers:  # counted only when they could run (their tools: not counted)
        hm.hosted(_named(body.mcp_servers), svc.tool_servers, svc.toolbox, "mcp_servers")
    aw.refuse_unsupported(body)
    _check_model(svc, info, body.model)
    messages = aw.to_messages(body.system, body.messages)
    im.check_images(messages, model=body.model, sees=svc.models.vision)
    info.dropped_tools = lv.labels(aw.left_out_tools(body))
    tools = aw.tools_for_engine(body)
    tokens = await anyio.to_thread.run_sync(_count, svc, body.model, messages, tools,
                                            aw.template_kwargs(body))
    return JSONResponse({"input_tokens": tokens})  # nothing generated: not charged
