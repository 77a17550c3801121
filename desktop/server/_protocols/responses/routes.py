"""``/v1/responses``: OpenAI's Responses API over the same engine path as chat completions.

The request (``requests``) is translated by ``translate`` into the chat route's engine request
(``scheduler.stream_chat``) and run through the one generation pipeline
(``generation.py``); ``ResponseAnswer`` renders it as ``response.*`` events
(``events``) or the response object (``output``). ``store`` keeps
the response and its conversation in the local database (``store.responses``) for
``GET``/``DELETE`` and ``previous_response_id``, each visible only to the API key that
stored it.
"""

from __future__ import annotations

import functools
import logging
import secrets
import time
from typing import Any

import anyio
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.chat import ToolStep
from desktop.engine import Delta, Message, ToolCall
from desktop.server import _image_parts as images
from desktop.server import _leniency as leniency
from desktop.server._answer import Ending, WholeAnswer
from desktop.server._deps import Call, CallDep
from desktop.server._error_bodies import ERROR_RESPONSES
from desktop.server._generation import SSE, generate_chat
from desktop.server._mcp import hosted as hosted_mcp
from desktop.server._protocols.responses import namespaces as tool_namespaces
from desktop.server._protocols.responses import output as responses_output
from desktop.server._protocols.responses import translate
from desktop.server._protocols.responses.events import ResponseEvents
from desktop.server._protocols.responses.requests import ResponsesRequest, dumped, items_of
from desktop.server._strict_json import StrictJSONRoute
from desktop.store import ResponseStore
from desktop.tools import ToolSet

router = APIRouter(route_class=StrictJSONRoute)
log = logging.getLogger("edgedesk.server")
_LISTED = ("response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed")


class PreviousResponseNotFound(InvalidRequest):
    """``previous_response_id`` names no stored response."""

    code = "previous_response_not_found"


class ResponseNotFound(EdgeDeskError):
    """No stored response has this id."""

    http_status = 404
    code = "not_found"
    error_type = "invalid_request_error"


class ResponseAnswer(ResponseEvents):
    """One response's answer: ``response.*`` events (``ResponseEvents``) or the response
    object, stored when asked; with hosted MCP tools, the ``mcp_list_tools`` and
    ``mcp_call`` items."""

    media_type = SSE

    def __init__(
        self,
        body: ResponsesRequest,
        *,
        max_tokens: int | None,
        hosting: hosted_mcp.Hosted | None,
        store: ResponseStore | None,
        items: list[dict[str, object]],
        owner: str,
        spaces: tool_namespaces.Namespaced | None = None,
    ) -> None:
        super().__init__(
            body,
            responses_output.Ids("resp_" + secrets.token_hex(16)),
            int(time.time()),
            store is not None,
            max_tokens=max_tokens,
            spaces=spaces,
        )
        self._hosting = hosting
        self._store, self._items, self._owner = store, items, owner  # store None: not kept

    def _keep(self, response: responses_output.ResponseObject) -> None:
        if self._store is None:
            return
        try:
            self._store.put(
                response["id"],
                self._req.model,
                dict(response),
                [*self._items, *(dict(item) for item in response["output"])],
                owner=self._owner,
            )
        except Exception:  # the answer was given; a full or locked disk must not undo that
            log.exception("could not store response %s", response["id"])

    def ending(self, ending: Ending) -> bytes:
        """The function calls and ``response.completed``; the response is stored first."""
        out = super().ending(ending)
        # Kept before the last event goes out: a client may name it as
        # previous_response_id the moment it has read response.completed.
        if self.response is not None and ending.final.finish_reason != "cancelled":
            self._keep(self.response)
        return out

    def error_event(self, error: EdgeDeskError) -> bytes:
        """``response.failed``."""
        return self.failed(error.code, error.message)

    def finished(self) -> None:
        """Nothing to do once the answer is out."""

    def _response(
        self, output: list[responses_output.OutputItem], calls: tuple[ToolCall, ...], final: Delta
    ) -> JSONResponse:
        response = responses_output.response_object(
            self._req,
            ids=self._ids,
            created_at=self._created_at,
            status="completed",
            output=output,
            usage=final.usage,
            stop=Ending(calls, final).stop,
            stored=self._store is not None,
            by_context=leniency.ended_by_context(final, self._max_tokens),
        )
        self._keep(response)
        return JSONResponse(response)

    def whole(self, answer: WholeAnswer) -> JSONResponse:
        """The response object (stored when asked)."""
        content, calls = answer.split()
        return self._response(
            responses_output.output_items(
                self._ids, answer.reasoning, content, calls, self._spaces
            ),
            calls,
            answer.final,
        )

    def listed(self, tools: ToolSet) -> bytes:
        """One ``mcp_list_tools`` item per named server."""
        assert self._hosting is not None
        base = self._ids.response.removeprefix("resp_")
        return b"".join(
            self.whole_item(item, _LISTED)
            for item in hosted_mcp.list_items(base, self._hosting, tools)
        )

    def step(self, step: ToolStep, tools: ToolSet, first: int) -> bytes:
        """One ``mcp_call`` item per call of the round (its words went out already)."""
        assert self._hosting is not None
        out = b""
        base = self._ids.response.removeprefix("resp_")
        for item in hosted_mcp.call_items(base, self._hosting, tools, step, first):
            ended = "completed" if item["status"] == "completed" else "failed"
            out += self.whole_item(
                item, ("response.mcp_call.in_progress", f"response.mcp_call.{ended}")
            )
        return out

    def whole_hosted(self, answer: hosted_mcp.Collected) -> JSONResponse:
        """The response object: the listings, each round's words and calls, the answer."""
        assert self._hosting is not None
        ids = self._ids
        base = ids.response.removeprefix("resp_")
        output: list[responses_output.OutputItem] = [
            *hosted_mcp.list_items(base, self._hosting, answer.tools)
        ]
        made = 0
        for n, step in enumerate(answer.steps):
            if step.content:
                said = responses_output.message_item(ids, step.content)
                said["id"] = f"{ids.message}_{n}"
                output.append(said)
            output += hosted_mcp.call_items(base, self._hosting, answer.tools, step, made)
            made += len(step.calls)
        output += [
            item
            for item in responses_output.output_items(ids, answer.reasoning, answer.text, ())
            if item["type"] != "message" or answer.text
        ]
        return self._response(output, (), answer.final)


def _owner(call: Call) -> str:
    """Whose stored responses a request may see: its key's identity, never its name (a
    key revoked and made again under that name reads none of the old one's); '' without
    keys."""
    return call.info.key_owner or ""


def _named(call: Call) -> tuple[str, float] | None:
    """The key's name and when it was made: what that name stored before responses were
    owned by identities is the key's if the key existed then (``ResponseStore.get``)."""
    return (call.info.key_name, call.info.key_created) if call.info.key_name else None


@router.post("/v1/responses", responses=ERROR_RESPONSES)
async def create_response(body: ResponsesRequest, call: CallDep) -> Any:
    """OpenAI Responses: whole or streamed (``response.*`` events)."""
    services, info = call.services, call.info
    named = [t for t in body.tools or () if t.type == "mcp"]
    # Hosted MCP: run here when allowed and configured, else a 400 naming what refuses.
    hosting = (
        hosted_mcp.hosted(
            [(t.server_label, t.server_url) for t in named],
            services.tool_servers,
            services.toolbox,
            "tools",
        )
        if named
        else None
    )
    translate.refuse_unsupported(body)
    call.check_model(body.model)
    store = services.response_store
    keep = store.enabled if body.store is None else body.store
    if keep and not store.enabled:
        raise InvalidRequest(store.refusal, param="store")
    history: list[dict[str, object]] = []  # stored JSON items, given back as they were
    if body.previous_response_id:
        previous = await anyio.to_thread.run_sync(
            functools.partial(
                store.get, body.previous_response_id, owner=_owner(call), named=_named(call)
            )
        )
        if previous is None:
            raise PreviousResponseNotFound(
                f"previous response '{body.previous_response_id}' was not found here (it was "
                "not stored, was deleted or has expired); send the conversation in input",
                param="previous_response_id",
            )
        history = previous.items
    items = translate.input_items(body.input)
    # Codex's namespace tools become plain function tools here; ``flat`` is the request
    # the model sees, ``body`` the one echoed back.
    flat, spaces = translate.flatten_namespaces(body)
    messages: list[Message] = translate.to_messages(
        body.instructions, [*items_of(history), *items], spaces, limits=services.image_limits
    )
    images.check_images(messages, model=body.model, sees=services.models.vision)
    info.dropped_tools = leniency.labels(
        [h for h in translate.left_out_tools(flat) if hosting is None or h.kind != "mcp"]
    )
    chat = translate.chat_call(flat, messages, call.limits)
    hosted_mcp.alone(hosting, chat.tools, "function tools and mcp tools")
    answer = ResponseAnswer(
        body,
        max_tokens=chat.params.max_tokens,
        hosting=hosting,
        store=store if keep else None,
        items=[*history, *(dumped(item) for item in items)],
        owner=_owner(call),
        spaces=spaces,
    )
    return await generate_chat(
        call,
        answer,
        hosting,
        streamed=bool(body.stream),
        model=body.model,
        chat=chat,
    )


async def _stored(call: Call, response_id: str) -> Any:
    found = await anyio.to_thread.run_sync(
        functools.partial(
            call.services.response_store.get, response_id, owner=_owner(call), named=_named(call)
        )
    )
    if found is None:
        raise ResponseNotFound(
            f"no stored response with id '{response_id}' (it was not "
            "stored, was deleted or has expired)",
            param="response_id",
        )
    return found


@router.get("/v1/responses/{response_id}", responses=ERROR_RESPONSES)
async def get_response(response_id: str, call: CallDep) -> JSONResponse:
    """A stored response, as it was returned."""
    return JSONResponse((await _stored(call, response_id)).response)


@router.get("/v1/responses/{response_id}/input_items", responses=ERROR_RESPONSES)
async def get_input_items(response_id: str, call: CallDep) -> JSONResponse:
    """The items a stored response answered (earlier turns included), oldest first."""
    found = await _stored(call, response_id)
    items = found.items[: len(found.items) - len(found.response.get("output", []))]
    return JSONResponse(
        {"object": "list", "data": items, "has_more": False, "first_id": None, "last_id": None}
    )


@router.delete("/v1/responses/{response_id}", responses=ERROR_RESPONSES)
async def delete_response(response_id: str, call: CallDep) -> JSONResponse:
    """Delete a stored response."""
    store = call.services.response_store
    if not await anyio.to_thread.run_sync(
        functools.partial(store.delete, response_id, owner=_owner(call), named=_named(call))
    ):
        raise ResponseNotFound(f"no stored response with id '{response_id}'", param="response_id")
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})
