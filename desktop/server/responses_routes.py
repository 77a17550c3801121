"""``/v1/responses``: OpenAI's Responses API over the same engine path as chat completions.

The request is translated by ``responses_wire`` into the chat route's engine request
(``scheduler.stream_chat``); streaming goes through the same pump, cancel-on-disconnect
and access-log bookkeeping. ``store`` keeps the response and its conversation in the
local database (``store.responses``) for ``GET``/``DELETE`` and ``previous_response_id``,
each visible only to the API key that stored it.
"""

from __future__ import annotations

import functools
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from desktop.chat.conversation import ToolStep
from desktop.engine.types import Message
from desktop.errors import EdgeDeskError, InvalidRequest
from desktop.server import hosted_mcp as hm
from desktop.server import leniency as lv
from desktop.server import responses_wire as rw
from desktop.server import schemas as s
from desktop.server.blocks import Ending, Piece, block_stream, guarded, whole_answer
from desktop.server.responses_events import ResponseEvents
from desktop.server.routes import _check_model, _info, _limits, _services
from desktop.server.streaming import Chunks, drain, start_stream, watch_disconnect
from desktop.tools.toolbox import ToolSet

router = APIRouter()
log = logging.getLogger("edgedesk.server")
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": s.ErrorBody} for code in (400, 401, 403, 404, 413, 422, 429, 503)}


class PreviousResponseNotFound(InvalidRequest):
    """``previous_response_id`` names no stored response."""

    code = "previous_response_not_found"


class ResponseNotFound(EdgeDeskError):
    """No stored response has this id."""

    http_status = 404
    code = "not_found"
    error_type = "invalid_request_error"


def _failed(events: ResponseEvents) -> Callable[[EdgeDeskError], bytes]:
    return lambda error: events.failed(error.code, error.message)


def _on_end(events: ResponseEvents, done: Callable[[dict[str, Any]], None]
            ) -> Callable[[Ending], None]:
    def end(ending: Ending) -> None:
        # Kept before the last event goes out: a client may name it as
        # previous_response_id the moment it has read response.completed.
        if events.response is not None and ending.final.finish_reason != "cancelled":
            done(events.response)
    return end


def _owner(request: Request) -> str:
    """Whose stored responses a request may see: its key's name ('' without keys)."""
    return _info(request).key_name or ""


def _keeper(store: Any, body: rw.ResponsesRequest, items: list[dict[str, Any]], owner: str
            ) -> Callable[[dict[str, Any]], None]:
    def keep(response: dict[str, Any]) -> None:
        try:
            store.put(response["id"], body.model, response, [*items, *response["output"]],
                      owner=owner)
        except Exception:  # the answer was given; a full or locked disk must not undo that
            log.exception("could not store response %s", response["id"])
    return keep


@router.post("/v1/responses", responses=_ERRORS)
async def create_response(body: rw.ResponsesRequest, request: Request) -> Any:
    """OpenAI Responses: whole or streamed (``response.*`` events)."""
    svc, info = _services(request), _info(request)
    named = [t for t in body.tools or () if t.get("type") == "mcp"]
    # Hosted MCP: run here when allowed and configured, else a 400 naming what refuses.
    hosting = hm.hosted([(t.get("server_label"), t.get("server_url")) for t in named],
                        svc.tool_servers, svc.toolbox, "tools") if named else None
    rw.refuse_unsupported(body)
    _check_model(svc, info, body.model)
    store = svc.stored
    keep = store.enabled if body.store is None else body.store
    if keep and not store.enabled:
        raise InvalidRequest(store.refusal, param="store")
    history: list[dict[str, Any]] = []
    if body.previous_response_id:
        previous = await anyio.to_thread.run_sync(
            functools.partial(store.get, body.previous_response_id, owner=_owner(request)))
        if previous is None:
            raise PreviousResponseNotFound(
                f"previous response '{body.previous_response_id}' was not found here (it was "
                "not stored, was deleted or has expired); send the conversation in input",
                param="previous_response_id")
        history = previous.items
    items = rw.input_items(body.input)
    # Codex's namespace tools become plain function tools here; ``flat`` is the request
    # the model sees, ``body`` the one echoed back.
    flat, spaces = rw.flatten_namespaces(body)
    messages: list[Message] = rw.to_messages(body.instructions, [*history, *items], spaces)
    info.dropped_tools = lv.labels([h for h in rw.left_out_tools(flat)
                                    if hosting is None or h.kind != "mcp"])
    tools = rw.tools_for_engine(flat)
    params = rw.generation_params(flat, _limits(svc), tools)
    cancel = threading.Event()
    ids = rw.Ids("resp_" + secrets.token_hex(16))
    created = int(time.time())
    keeper = _keeper(store, body, [*history, *items], _owner(request))
    if hosting is not None:
        if tools:
            raise InvalidRequest("function tools and mcp tools in one request are not "
                                 "supported here; send one kind", param="tools")
        loop = hm.run(hm.Counted(svc.scheduler, lambda s: Chunks(s, info)), hosting.toolbox,
                      body.model, messages, params=params,
                      template_kwargs=rw.template_kwargs(body), cancel=cancel)
        return await _hosted_answer(request, body, hosting, loop, ids=ids, created=created,
                                    keep=keep, keeper=keeper,
                                    max_tokens=params.max_tokens, cancel=cancel)
    chunks = Chunks(svc.scheduler.stream_chat(body.model, messages, params, cancel, tools,
                                              template_kwargs=rw.template_kwargs(body)), info)
    if body.stream:
        events = ResponseEvents(body, ids, created, keep, max_tokens=params.max_tokens,
                                spaces=spaces)
        return await start_stream(request, guarded(block_stream(
            chunks, tools, forced=rw.is_forced(flat), events=events,
            on_end=_on_end(events, keeper) if keep else None), _failed(events), info=info),
            cancel)
    text, reasoning, final, _ = await watch_disconnect(
        request, cancel, lambda: anyio.to_thread.run_sync(drain, chunks))
    content, calls = whole_answer(text, tools)
    response = rw.response_object(
        body, ids=ids, created_at=created, status="completed",
        output=rw.output_items(ids, reasoning, content, calls, spaces), usage=final.usage,
        stop=Ending(calls, final).stop, stored=keep,
        by_context=lv.ended_by_context(final, params.max_tokens))
    if keep:
        await anyio.to_thread.run_sync(keeper, response)
    return JSONResponse(response)


_LISTED = ("response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed")


def _hosted_events(events: ResponseEvents, hosting: hm.Hosted, loop: Iterator[hm.Event],
                   ids: rw.Ids, keeper: Callable[[dict[str, Any]], None] | None
                   ) -> Iterator[bytes]:
    """A streamed hosted-MCP response: the listings, each call, the words, the end."""
    base = ids.response.removeprefix("resp_")
    tools = ToolSet()
    made = 0
    for event in loop:
        if isinstance(event, ToolSet):
            tools = event
            yield events.opening() + b"".join(
                events.whole_item(item, _LISTED) for item in hm.list_items(base, hosting, tools))
        elif isinstance(event, ToolStep):
            out = b""
            for item in hm.call_items(base, hosting, tools, event, made):
                ended = "completed" if item["status"] == "completed" else "failed"
                out += events.whole_item(item, ("response.mcp_call.in_progress",
                                                f"response.mcp_call.{ended}"))
            made += len(event.calls)
            yield out
        elif event.is_final:
            ending = events.ending(Ending((), event))
            if keeper is not None:
                _on_end(events, keeper)(Ending((), event))
            yield ending
        else:
            yield events.piece(Piece("reasoning", event.reasoning)) + \
                events.piece(Piece("text", event.text))


async def _hosted_answer(request: Request, body: rw.ResponsesRequest, hosting: hm.Hosted,
                         loop: Iterator[hm.Event], *, ids: rw.Ids, created: int, keep: bool,
                         keeper: Callable[[dict[str, Any]], None],
                         max_tokens: int | None, cancel: threading.Event) -> Any:
    """A response whose MCP tools EdgeDesk ran, whole or streamed."""
    info = _info(request)
    if body.stream:
        events = ResponseEvents(body, ids, created, keep, max_tokens=max_tokens)
        return await start_stream(request, guarded(_hosted_events(
            events, hosting, loop, ids, keeper if keep else None), _failed(events),
            info=info), cancel)
    got = await watch_disconnect(request, cancel,
                                 lambda: anyio.to_thread.run_sync(hm.collect, loop))
    base = ids.response.removeprefix("resp_")
    output = hm.list_items(base, hosting, got.tools)
    made = 0
    for n, step in enumerate(got.steps):
        if step.content:
            output.append({**rw.message_item(ids, step.content), "id": f"{ids.message}_{n}"})
        output += hm.call_items(base, hosting, got.tools, step, made)
        made += len(step.calls)
    output += [item for item in rw.output_items(ids, got.reasoning, got.text, ())
               if item["type"] != "message" or got.text]
    response = rw.response_object(
        body, ids=ids, created_at=created, status="completed", output=output,
        usage=got.final.usage, stop=Ending((), got.final).stop, stored=keep,
        by_context=lv.ended_by_context(got.final, max_tokens))
    if keep:
        await anyio.to_thread.run_sync(keeper, response)
    return JSONResponse(response)


async def _stored(request: Request, response_id: str) -> Any:
    found = await anyio.to_thread.run_sync(functools.partial(
        _services(request).stored.get, response_id, owner=_owner(request)))
    if found is None:
        raise ResponseNotFound(f"no stored response with id '{response_id}' (it was not "
                               "stored, was deleted or has expired)", param="response_id")
    return found


@router.get("/v1/responses/{response_id}", responses=_ERRORS)
async def get_response(response_id: str, request: Request) -> JSONResponse:
    """A stored response, as it was returned."""
    return JSONResponse((await _stored(request, response_id)).response)


@router.get("/v1/responses/{response_id}/input_items", responses=_ERRORS)
async def get_input_items(response_id: str, request: Request) -> JSONResponse:
    """The items a stored response answered (earlier turns included), oldest first."""
    found = await _stored(request, response_id)
    items = found.items[:len(found.items) - len(found.response.get("output", []))]
    return JSONResponse({"object": "list", "data": items, "has_more": False,
                         "first_id": None, "last_id": None})


@router.delete("/v1/responses/{response_id}", responses=_ERRORS)
async def delete_response(response_id: str, request: Request) -> JSONResponse:
    """Delete a stored response."""
    store = _services(request).stored
    if not await anyio.to_thread.run_sync(functools.partial(store.delete, response_id,
                                                            owner=_owner(request))):
        raise ResponseNotFound(f"no stored response with id '{response_id}'",
                               param="response_id")
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})
