"""Ollama's ``/api/*``: tags, show, chat, generate (with FIM), embed, version, ps.

Translated by ``ollama_wire`` into the engine requests the OpenAI routes make and run
through the same queue, pump and cancel-on-disconnect; streams are NDJSON (Ollama's
default is to stream). Errors leave as ``{"error": "..."}`` (the app picks the shape by
path). ``keep_alive: 0`` unloads the model once the answer is done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from desktop.errors import EdgeDeskError, InvalidRequest
from desktop.server import images as im
from desktop.server import ollama_wire as ow
from desktop.server.blocks import Ending, answer_pieces, guarded, whole_answer
from desktop.server.routes import _check_model, _embed, _info, _limits, _services
from desktop.server.services import RequestInfo, Services
from desktop.server.streaming import Chunks, EventStream, drain, start_stream, watch_disconnect

router = APIRouter()
NDJSON = "application/x-ndjson"


def _model(svc: Services, info: RequestInfo, name: str) -> str:
    """The served id an Ollama name means (``name:latest`` is ``name``)."""
    model = name if svc.models.has(name) else ow.model_name(name)
    _check_model(svc, info, model)
    return model


def _after(svc: Services, model: str, keep_alive: str | float | None) -> Callable[[], None]:
    """What to do once the answer is out: unload for ``keep_alive: 0``."""
    seconds = ow.keep_alive_s(keep_alive)

    def done() -> None:
        if seconds == 0:
            svc.scheduler.unload(model)
    return done


def _head(model: str) -> dict[str, Any]:
    return {"model": model, "created_at": ow.timestamp(time.time())}


def _lines(chunks: Chunks, model: str, tools: list[dict[str, Any]] | None, *, chat: bool,
           after: Callable[[], None]) -> Iterator[bytes]:
    for item in answer_pieces(chunks, tools, forced=False):
        if isinstance(item, Ending):
            yield from _final_lines(model, item, chat=chat)
            continue
        key = ("thinking" if item.kind == "reasoning" else "content") if chat else \
            ("thinking" if item.kind == "reasoning" else "response")
        body: dict[str, Any] = {"role": "assistant", "content": ""} if chat else {}
        body[key] = item.text
        yield ow.line({**_head(model), **({"message": body} if chat else
                                          {"response": "", **body}), "done": False})
    after()


def _failed(error: EdgeDeskError) -> bytes:
    return ow.line({"error": error.message})  # Ollama's last line of a stream that failed


def _final_lines(model: str, ending: Ending, *, chat: bool) -> Generator[bytes, None, None]:
    if ending.calls:
        yield ow.line({**_head(model), "message": {
            "role": "assistant", "content": "", "tool_calls": ow.tool_calls_out(ending.calls)},
            "done": False})
    last = {"message": {"role": "assistant", "content": ""}} if chat else {"response": ""}
    yield ow.line({**_head(model), **last, "done": True,
                   "done_reason": ow.done_reason(ending.final), **ow.stats(ending.final)})


async def _ndjson(request: Request, events: Generator[bytes, None, None],
                  cancel: threading.Event) -> EventStream:
    response = await start_stream(request, events, cancel)
    response.media_type = NDJSON
    response.headers["content-type"] = NDJSON
    return response


# ---------------------------------------------------------------- listing


@router.get("/api/version")
def version(request: Request) -> dict[str, str]:
    """The Ollama API level served (``server.ollama_version``: clients check it)."""
    return {"version": _services(request).settings.ollama_version}


def _describe_all(svc: Services) -> list[dict[str, Any]]:
    found = []
    for model in svc.models.ids():
        try:
            found.append(ow.describe(model, svc.models.describe(model)))
        except (EdgeDeskError, OSError):
            continue  # a file that went away between listing and reading its header
    return found


@router.get("/api/tags")
async def tags(request: Request) -> dict[str, Any]:
    """Every model a request may name, with header facts."""
    return {"models": await anyio.to_thread.run_sync(_describe_all, _services(request))}


@router.post("/api/show")
async def show(body: ow.ShowRequest, request: Request) -> dict[str, Any]:
    """One model's details, header facts and capabilities."""
    svc, info = _services(request), _info(request)
    name = body.model or body.name
    if not name:
        raise InvalidRequest("model is required", param="model")
    model = _model(svc, info, name)
    facts = await anyio.to_thread.run_sync(svc.models.describe, model)
    return ow.show(model, facts)


@router.get("/api/ps")
def running(request: Request) -> dict[str, Any]:
    """The models loaded now, with when they will be unloaded if left idle."""
    sched = _services(request).scheduler
    now = time.time()
    models = []
    for loaded in sched.loaded():
        report = loaded.report
        size = report.estimated_bytes
        expires = now + max(0.0, float(sched.keep_alive_s) - loaded.idle_s)
        models.append({"name": loaded.model_id, "model": loaded.model_id, "size": size,
                       "digest": "", "details": {"format": "gguf"},
                       "expires_at": ow.timestamp(expires),
                       "size_vram": size if report.gpu_layers else 0,
                       "context_length": report.context_length})
    return {"models": models}


# ---------------------------------------------------------------- generation


@router.post("/api/chat")
async def chat(body: ow.ChatRequest, request: Request) -> Any:
    """A chat answer: NDJSON lines (the default) or one object with ``stream: false``."""
    svc, info = _services(request), _info(request)
    model = _model(svc, info, body.model)
    messages = ow.to_messages(body.messages)
    im.check_images(messages, model=model, sees=svc.models.vision)
    tools = ow.tools_for_engine(body.tools)
    params = ow.generation_params(body, _limits(svc))
    after = _after(svc, model, body.keep_alive)
    if not messages:  # Ollama's way to load a model: an empty conversation
        await anyio.to_thread.run_sync(svc.scheduler.load, model)
        return {**_head(model), "message": {"role": "assistant", "content": ""},
                "done": True, "done_reason": "load"}
    cancel = threading.Event()
    chunks = Chunks(svc.scheduler.stream_chat(model, messages, params, cancel, tools,
                                              template_kwargs=ow.template_kwargs(body.think)),
                    info)
    if body.stream:
        return await _ndjson(request, guarded(
            _lines(chunks, model, tools, chat=True, after=after), _failed, info=info), cancel)
    text, reasoning, final, _ = await watch_disconnect(
        request, cancel, lambda: anyio.to_thread.run_sync(drain, chunks))
    content, calls = whole_answer(text, tools)
    await anyio.to_thread.run_sync(after)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["thinking"] = reasoning
    if calls:
        message["tool_calls"] = ow.tool_calls_out(calls)
    return {**_head(model), "message": message, "done": True,
            "done_reason": ow.done_reason(final), **ow.stats(final)}


@router.post("/api/generate")
async def generate(body: ow.GenerateRequest, request: Request) -> Any:
    """A completion: templated, ``raw``, or fill-in-the-middle with ``suffix``."""
    svc, info = _services(request), _info(request)
    model = _model(svc, info, body.model)
    ow.refuse_generate(body)
    params = ow.generation_params(body, _limits(svc))
    after = _after(svc, model, body.keep_alive)
    if not body.prompt and body.suffix is None:  # Ollama's load / unload request
        unload = ow.keep_alive_s(body.keep_alive) == 0
        await anyio.to_thread.run_sync(svc.scheduler.unload if unload else svc.scheduler.load,
                                       model)
        return {**_head(model), "response": "", "done": True,
                "done_reason": "unload" if unload else "load"}
    cancel = threading.Event()
    if body.suffix is not None:
        stream = svc.scheduler.stream_infill(model, body.prompt, body.suffix, params, cancel)
    elif body.raw:
        stream = svc.scheduler.stream_completion(model, body.prompt, params, cancel)
    else:
        prompt = ow.generate_messages(body)
        im.check_images(prompt, model=model, sees=svc.models.vision)
        stream = svc.scheduler.stream_chat(model, prompt, params, cancel,
                                           None, template_kwargs=ow.template_kwargs(body.think))
    chunks = Chunks(stream, info)
    if body.stream:
        return await _ndjson(request, guarded(
            _lines(chunks, model, None, chat=False, after=after), _failed, info=info), cancel)
    text, reasoning, final, _ = await watch_disconnect(
        request, cancel, lambda: anyio.to_thread.run_sync(drain, chunks))
    await anyio.to_thread.run_sync(after)
    out: dict[str, Any] = {**_head(model), "response": text}
    if reasoning:
        out["thinking"] = reasoning
    return {**out, "done": True, "done_reason": ow.done_reason(final), **ow.stats(final)}


# ---------------------------------------------------------------- embeddings


@router.post("/api/embed")
async def embed(body: ow.EmbedRequest, request: Request) -> JSONResponse:
    """Unit vectors for one text or many (long texts are windowed and pooled, not cut)."""
    svc, info = _services(request), _info(request)
    model = _model(svc, info, body.model)
    if body.dimensions is not None:
        raise InvalidRequest("dimensions is not supported; the model's own width is used",
                             param="dimensions")
    texts = [body.input] if isinstance(body.input, str) else list(body.input)
    if not texts or any(not t for t in texts):
        raise InvalidRequest("input must be a non-empty text or a list of them",
                             param="input")
    started = time.perf_counter()
    inputs: list[str | list[int]] = list(texts)
    vectors, tokens = await anyio.to_thread.run_sync(_embed, svc, model, inputs)
    info.tokens_in = tokens
    await anyio.to_thread.run_sync(_after(svc, model, body.keep_alive))
    return JSONResponse({"model": model, "embeddings": vectors,
                         "total_duration": int((time.perf_counter() - started) * 1e9),
                         "load_duration": 0, "prompt_eval_count": tokens})


@router.post("/api/embeddings")
async def embeddings(body: ow.EmbeddingsRequest, request: Request) -> JSONResponse:
    """The older one-text form: ``{"embedding": [...]}`` (empty for an empty prompt)."""
    svc, info = _services(request), _info(request)
    model = _model(svc, info, body.model)
    if not body.prompt:
        return JSONResponse({"embedding": []})
    inputs: list[str | list[int]] = [body.prompt]
    vectors, tokens = await anyio.to_thread.run_sync(_embed, svc, model, inputs)
    info.tokens_in = tokens
    await anyio.to_thread.run_sync(_after(svc, model, body.keep_alive))
    return JSONResponse({"embedding": vectors[0]})
