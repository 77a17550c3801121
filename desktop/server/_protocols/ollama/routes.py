"""Ollama's ``/api/*``: tags, show, chat, generate (with FIM), embed, version, ps.

Read as ``requests``, translated by ``translate`` into the engine requests the OpenAI
routes make and run through the one generation pipeline (``_generation.py``);
``OllamaAnswer`` renders the answer (``replies``) as NDJSON lines (Ollama's default is to
stream) or one object. Errors leave as ``{"error": "..."}`` (the app picks the shape by
path). ``keep_alive: 0`` unloads the model once the answer is done.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import anyio
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.server import _generation as generation
from desktop.server import _image_parts as images
from desktop.server._answer import Ending, Piece, WholeAnswer
from desktop.server._deps import Call, CallDep, ServicesDep, may_chat, visible
from desktop.server._embeddings import embed as embed_inputs
from desktop.server._protocols.ollama import replies, translate
from desktop.server._protocols.ollama.requests import (
    ChatRequest,
    EmbeddingsRequest,
    EmbedRequest,
    GenerateRequest,
    ShowRequest,
)
from desktop.server._services import Services
from desktop.server._strict_json import StrictJSONRoute
from desktop.server._token_count import user_texts

router = APIRouter(route_class=StrictJSONRoute)
NDJSON = "application/x-ndjson"


def _model(call: Call, name: str) -> str:
    """The served id an Ollama name means (``name:latest`` is ``name``)."""
    model = name if call.services.models.has(name) else translate.model_name(name)
    call.check_model(model)
    return model


def _unload_if_asked(services: Services, model: str, keep_alive: str | float | None) -> None:
    """Unload ``model`` when ``keep_alive`` is 0 (blocks)."""
    if translate.keep_alive_s(keep_alive) == 0:
        services.scheduler.unload(model)


def _head(model: str) -> dict[str, object]:
    return {"model": model, "created_at": replies.timestamp(time.time())}


class OllamaAnswer:
    """A chat or generate answer: NDJSON lines (thinking, words, calls, the last with the
    stats), or one object; ``keep_alive: 0`` unloads the model once it is out."""

    media_type = NDJSON
    keepalive = b""  # no event for it in this protocol

    def __init__(
        self,
        model: str,
        *,
        chat: bool,
        after: Callable[[], None],
    ) -> None:
        self._model, self._chat, self._after = model, chat, after

    def _line(self, key: str, text: str) -> bytes:
        if self._chat:
            return replies.line(
                {
                    **_head(self._model),
                    "message": {"role": "assistant", "content": "", key: text},
                    "done": False,
                }
            )
        return replies.line({**_head(self._model), "response": "", key: text, "done": False})

    def opening(self) -> bytes:
        """A line with no words, sent when the engine's first chunk comes."""
        if self._chat:
            return replies.line(
                {
                    **_head(self._model),
                    "message": {"role": "assistant", "content": ""},
                    "done": False,
                }
            )
        return replies.line({**_head(self._model), "response": "", "done": False})

    def piece(self, piece: Piece) -> bytes:
        """A thinking line, then a words line."""
        out = self._line("thinking", piece.reasoning) if piece.reasoning else b""
        if piece.text:
            out += self._line("content" if self._chat else "response", piece.text)
        return out

    def ending(self, ending: Ending) -> bytes:
        """The tool calls' line, then the last line with ``done`` and the stats."""
        out = b""
        if ending.calls:
            out = replies.line(
                {
                    **_head(self._model),
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": replies.tool_calls_out(ending.calls),
                    },
                    "done": False,
                }
            )
        last = {"message": {"role": "assistant", "content": ""}} if self._chat else {"response": ""}
        return out + replies.line(
            {
                **_head(self._model),
                **last,
                "done": True,
                "done_reason": replies.done_reason(ending.final),
                **replies.stats(ending.final),
            }
        )

    def error_event(self, error: EdgeDeskError) -> bytes:
        """Ollama's last line of a stream that failed."""
        return replies.line({"error": error.message})

    def whole(self, answer: WholeAnswer) -> dict[str, object]:
        """The one object of ``stream: false``."""
        if not self._chat:
            out: dict[str, object] = {**_head(self._model), "response": answer.text}
            if answer.reasoning:
                out["thinking"] = answer.reasoning
            return {
                **out,
                "done": True,
                "done_reason": replies.done_reason(answer.final),
                **replies.stats(answer.final),
            }
        content, calls = answer.split()
        message: dict[str, object] = {"role": "assistant", "content": content}
        if answer.reasoning:
            message["thinking"] = answer.reasoning
        if calls:
            message["tool_calls"] = replies.tool_calls_out(calls)
        return {
            **_head(self._model),
            "message": message,
            "done": True,
            "done_reason": replies.done_reason(answer.final),
            **replies.stats(answer.final),
        }

    def finished(self) -> None:
        """What the request asked for once the answer is out (unload for keep_alive 0)."""
        self._after()


# ---------------------------------------------------------------- listing


@router.get("/api/version")
def version(services: ServicesDep) -> dict[str, str]:
    """The Ollama API level served (``server.ollama_version``: clients check it)."""
    return {"version": services.settings.ollama_version}


def _describe_all(services: Services, ids: list[str]) -> list[replies.Listed]:
    found = []
    for model in ids:
        try:
            found.append(replies.describe(model, services.models.describe(model)))
        except (EdgeDeskError, OSError):
            continue  # a file that went away between listing and reading its header
    return found


@router.get("/api/tags")
async def tags(call: CallDep) -> dict[str, object]:
    """Every model the request's key may name, with header facts."""
    ids = visible(call.info, call.services.models.ids())
    return {"models": await anyio.to_thread.run_sync(_describe_all, call.services, ids)}


@router.post("/api/show")
async def show(body: ShowRequest, call: CallDep) -> dict[str, object]:
    """One model's details, header facts and capabilities."""
    name = body.model or body.name
    if not name:
        raise InvalidRequest("model is required", param="model")
    model = _model(call, name)
    facts = await anyio.to_thread.run_sync(call.services.models.describe, model)
    shown = replies.show(model, facts)
    if not may_chat(call.info):
        # The chat template is the chat scope's: an embeddings-only key learns the
        # model's facts, not how its prompts are built.
        shown["template"] = ""
    return dict(shown)


@router.get("/api/ps")
def running(services: ServicesDep) -> dict[str, object]:
    """The models loaded now, with when they will be unloaded if left idle."""
    sched = services.scheduler
    now = time.time()
    models: list[dict[str, object]] = []
    for loaded in sched.loaded():
        report = loaded.report
        size = report.estimated_bytes
        expires = now + max(0.0, float(sched.keep_alive_s) - loaded.idle_s)
        models.append(
            {
                "name": loaded.model_id,
                "model": loaded.model_id,
                "size": size,
                "digest": "",
                "details": {"format": "gguf"},
                "expires_at": replies.timestamp(expires),
                "size_vram": size if report.gpu_layers else 0,
                "context_length": report.context_length,
            }
        )
    return {"models": models}


# ---------------------------------------------------------------- generation


@router.post("/api/chat")
async def chat(body: ChatRequest, call: CallDep) -> Any:
    """A chat answer: NDJSON lines (the default) or one object with ``stream: false``."""
    services = call.services
    model = _model(call, body.model)
    messages = translate.to_messages(body.messages, limits=services.image_limits)
    images.check_images(messages, model=model, sees=services.models.vision)
    chat = translate.chat_call(body, messages, call.limits)
    if not messages:  # Ollama's way to load a model: an empty conversation
        await anyio.to_thread.run_sync(services.scheduler.load, model)
        return {
            **_head(model),
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "load",
        }
    await call.refuse_over_context(model, user_texts(chat), chat.params.context_length)
    stream = services.scheduler.stream_chat(model, chat, call.cancel)
    answer = OllamaAnswer(
        model,
        chat=True,
        after=functools.partial(_unload_if_asked, services, model, body.keep_alive),
    )
    return await generation.generate(call, stream, answer, streamed=bool(body.stream))


@router.post("/api/generate")
async def generate(body: GenerateRequest, call: CallDep) -> Any:
    """A completion: templated, ``raw``, or fill-in-the-middle with ``suffix``."""
    services = call.services
    model = _model(call, body.model)
    translate.refuse_generate(body)
    params = translate.generation_params(body, call.limits)
    if not body.prompt and body.suffix is None:  # Ollama's load / unload request
        unload = translate.keep_alive_s(body.keep_alive) == 0
        await anyio.to_thread.run_sync(
            services.scheduler.unload if unload else services.scheduler.load, model
        )
        return {
            **_head(model),
            "response": "",
            "done": True,
            "done_reason": "unload" if unload else "load",
        }
    if body.suffix is not None or body.raw:
        await call.refuse_over_context(model, [body.prompt, body.suffix or ""])
    if body.suffix is not None:
        stream = services.scheduler.stream_infill(
            model, body.prompt, body.suffix, params, call.cancel
        )
    elif body.raw:
        stream = services.scheduler.stream_completion(model, body.prompt, params, call.cancel)
    else:
        prompt = translate.generate_messages(body, limits=services.image_limits)
        images.check_images(prompt, model=model, sees=services.models.vision)
        chat = translate.generate_call(body, prompt, params)
        await call.refuse_over_context(model, user_texts(chat), chat.params.context_length)
        stream = services.scheduler.stream_chat(model, chat, call.cancel)
    answer = OllamaAnswer(
        model,
        chat=False,
        after=functools.partial(_unload_if_asked, services, model, body.keep_alive),
    )
    return await generation.generate(call, stream, answer, streamed=bool(body.stream))


# ---------------------------------------------------------------- embeddings


@router.post("/api/embed")
async def embed(body: EmbedRequest, call: CallDep) -> JSONResponse:
    """Unit vectors for one text or many (long texts are windowed and pooled, not cut)."""
    services = call.services
    model = _model(call, body.model)
    if body.dimensions is not None:
        raise InvalidRequest(
            "dimensions is not supported; the model's own width is used", param="dimensions"
        )
    texts = [body.input] if isinstance(body.input, str) else list(body.input)
    if not texts or any(not t for t in texts):
        raise InvalidRequest("input must be a non-empty text or a list of them", param="input")
    started = time.perf_counter()
    inputs: list[str | list[int]] = list(texts)
    vectors, tokens = await call.compute(
        lambda cancel: embed_inputs(services, model, inputs, cancel)
    )
    call.info.tokens_in = tokens
    await anyio.to_thread.run_sync(_unload_if_asked, services, model, body.keep_alive)
    return JSONResponse(
        {
            "model": model,
            "embeddings": vectors,
            "total_duration": int((time.perf_counter() - started) * 1e9),
            "load_duration": 0,
            "prompt_eval_count": tokens,
        }
    )


@router.post("/api/embeddings")
async def embeddings(body: EmbeddingsRequest, call: CallDep) -> JSONResponse:
    """The older one-text form: ``{"embedding": [...]}`` (empty for an empty prompt)."""
    services = call.services
    model = _model(call, body.model)
    if not body.prompt:
        return JSONResponse({"embedding": []})
    inputs: list[str | list[int]] = [body.prompt]
    vectors, tokens = await call.compute(
        lambda cancel: embed_inputs(services, model, inputs, cancel, "prompt")
    )
    call.info.tokens_in = tokens
    await anyio.to_thread.run_sync(_unload_if_asked, services, model, body.keep_alive)
    return JSONResponse({"embedding": vectors[0]})
