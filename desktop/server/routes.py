"""The endpoints: models, chat and text completions, embeddings, rerank, health, metrics.

Generation runs on worker threads (``streaming.py``): a streamed answer on one thread
that turns chunks into SSE bytes, a whole answer in one blocking drain. Errors that
come before the first chunk (queue full, unknown model, context overflow) still answer
with their own status.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from typing import Any

import anyio
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from desktop.engine.protocol import Engine
from desktop.engine.toolcalls import StreamGate
from desktop.engine.types import TokenLogprob, Usage
from desktop.errors import EdgeDeskError, InvalidRequest, ModelNotAllowed, ModelNotFound
from desktop.server import images as im
from desktop.server import leniency as lv
from desktop.server import openai as oa
from desktop.server import openai_requests as oq
from desktop.server import schemas as s
from desktop.server.blocks import guarded
from desktop.server.cache import LRUCache, embedding_key, is_deterministic, request_key
from desktop.server.metrics import gauges_from
from desktop.server.services import RequestInfo, Services
from desktop.server.sse import ChatEvents, CompletionEvents
from desktop.server.streaming import Chunks, drain, start_stream, watch_disconnect

router = APIRouter()
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": s.ErrorBody} for code in (400, 401, 403, 404, 413, 422, 429, 503)}


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def _info(request: Request) -> RequestInfo:
    info: RequestInfo = request.state.edgedesk
    return info


def _check_model(svc: Services, info: RequestInfo, model: str) -> None:
    info.model = model[:200]
    if info.key_models is not None and model not in info.key_models:
        raise ModelNotAllowed(f"the API key '{info.key_name}' may not use the model "
                              f"'{model}'; it may use: {', '.join(info.key_models)}",
                              param="model")
    if not svc.models.has(model):
        ids = svc.models.ids()
        shown = ", ".join(ids) or "none; start the server with --model"
        raise ModelNotFound(f"the model '{model}' does not exist here; available: {shown}",
                            param="model")


def _limits(svc: Services) -> oq.Limits:
    return oq.Limits(max_tokens=svc.settings.max_tokens_limit,
                     timeout_s=svc.settings.generation_timeout_s)


# ---------------------------------------------------------------- models, health, metrics


@router.get("/v1/models", response_model=s.ModelList, responses=_ERRORS,
            response_model_exclude_none=True)
def list_models(request: Request) -> s.ModelList:
    """Every model a request may name; a loaded local one says where it runs."""
    svc = _services(request)
    placed = {m.model_id: m.report.placement for m in svc.scheduler.loaded()}

    def info(model_id: str) -> s.EdgeDeskModelInfo | None:
        where = placed.get(model_id)
        if where is None:
            return None
        return s.EdgeDeskModelInfo(placement=where.describe(), layers_total=where.layers_total,
                                   layers_offloaded=where.layers_offloaded,
                                   devices=list(where.devices))

    def capabilities(model_id: str) -> list[str] | None:
        try:
            sees = svc.models.vision(model_id)
        except EdgeDeskError:
            return None  # listed for what it is; a request to it says what is wrong
        return ["completion", "vision"] if sees else None

    return s.ModelList(data=[s.ModelCard(id=m, capabilities=capabilities(m), edgedesk=info(m))
                             for m in svc.models.ids()])


@router.get("/health", response_model=s.Health)
def health(request: Request) -> s.Health:
    """Liveness and load, without authentication."""
    sched = _services(request).scheduler
    return s.Health(busy=sched.busy, queue_depth=sched.queue_depth,
                    loaded_models=[m.model_id for m in sched.loaded()])


@router.get("/metrics", response_class=PlainTextResponse, responses=_ERRORS)
def metrics(request: Request, fmt: str = Query("prometheus", alias="format",
                                               pattern="^(prometheus|json)$")) -> Response:
    """Prometheus text exposition, or the same figures as JSON with ``?format=json``."""
    svc = _services(request)
    gauges = gauges_from(svc.scheduler)
    if fmt == "json":
        return JSONResponse(svc.metrics.snapshot(gauges))
    return PlainTextResponse(svc.metrics.render(gauges),
                             media_type="text/plain; version=0.0.4; charset=utf-8")


# ---------------------------------------------------------------- chat


def _closing(usage: Usage | None, events: ChatEvents | CompletionEvents, include_usage: bool
             ) -> Iterator[bytes]:
    """What every stream ends with: the usage event when asked for, then ``[DONE]``."""
    if include_usage:
        yield events.usage(usage)
    yield oa.DONE


def _stream_error(error: EdgeDeskError) -> bytes:
    return oa.stream_error(error.message, type_=error.error_type, code=error.code)


def _chat_events(chunks: Chunks, events: ChatEvents, *, tools: list[dict[str, Any]] | None,
                 forced: bool, logprobs: bool, include_usage: bool
                 ) -> Generator[bytes, None, None]:
    pending: list[TokenLogprob] = []  # logprobs of tokens whose text is not sent yet

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        lp = None
        if logprobs and (pending or finish is not None):
            lp = list(pending)
            pending.clear()
        return events.event(delta, finish, lp)

    # With tools offered, words stream until something may be a call; that is held
    # until the answer is complete and parsed.
    gate = StreamGate(oq.tool_names(tools), hold_all=forced) if tools else None
    # Sent with the first chunk's event: before it, an error can still get its own status.
    opening = events.event({"role": "assistant", "content": ""})
    for chunk in chunks:
        if gate is None and not logprobs and not chunk.reasoning:
            out = events.content(chunk.text) if chunk.text else b""  # the common case
        else:
            pending.extend(chunk.logprobs)
            delta = oa.chunk_delta(chunk)
            if gate is not None:
                delta.pop("content", None)
                words = gate.feed(chunk.text)
                if words:
                    delta["content"] = words
            out = event(delta) if delta else b""
        if opening:
            out, opening = opening + out, b""
        if out:
            yield out
    if opening:
        yield opening
    calls: tuple[Any, ...] = ()
    if gate is not None:
        rest, calls = gate.finish()
        if rest:
            yield event({"content": rest})
        if calls:
            yield event(oa.tool_call_deltas(calls))
    yield event({}, oa.finish_reason(chunks.final, calls))
    yield from _closing(chunks.final.usage, events, include_usage)


@router.post("/v1/chat/completions", response_model=s.ChatCompletion, responses=_ERRORS)
async def chat_completions(body: s.ChatCompletionRequest, request: Request) -> Any:
    """OpenAI chat completions, streamed (SSE) or whole."""
    svc, info = _services(request), _info(request)
    _check_model(svc, info, body.model)
    messages = oq.to_messages(body.messages)
    im.check_images(messages, model=body.model, sees=svc.models.vision)
    info.dropped_tools = lv.labels(oq.left_out_tools(body))
    params = oq.sampling_params(body, _limits(svc))
    tools = oq.tools_for_engine(body)
    template_kwargs = oq.template_kwargs(body)
    # The key hashes the whole conversation: only made when the answer may be cached
    # (the cache is off by default and streams never are).
    slot: tuple[LRUCache[dict[str, Any]], str] | None = None
    if svc.responses is not None and not body.stream:
        raw = body.model_dump(mode="json", by_alias=True, exclude_none=True)
        if is_deterministic(raw):
            slot = (svc.responses, request_key("chat", raw))
            hit = svc.responses.get(slot[1])
            svc.metrics.cache_event("response", hit is not None)
            if hit is not None:
                return JSONResponse({**hit, "id": "chatcmpl-" + info.request_id})
    cancel = threading.Event()
    chunks = Chunks(svc.scheduler.stream_chat(body.model, messages, params, cancel, tools,
                                              template_kwargs), info)
    rid, created = "chatcmpl-" + info.request_id, int(time.time())
    if body.stream:
        include = bool(body.stream_options and body.stream_options.include_usage)
        events = ChatEvents(request_id=rid, model=body.model, created=created,
                            include_usage=include)
        return await start_stream(request, guarded(_chat_events(
            chunks, events, tools=tools, forced=oq.forced_tools(body) is not None,
            logprobs=bool(body.logprobs), include_usage=include), _stream_error, info=info),
            cancel)
    text, reasoning, final, logprobs = await watch_disconnect(
        request, cancel, lambda: anyio.to_thread.run_sync(drain, chunks))
    result = oa.chat_completion(request_id=rid, model=body.model, created=created, text=text,
                                reasoning=reasoning, final=final, tools=tools,
                                logprobs=logprobs if body.logprobs else None)
    data = result.model_dump(mode="json")
    if slot is not None and final.finish_reason in ("stop", "length"):
        slot[0].put(slot[1], data)
    return JSONResponse(data)


# ---------------------------------------------------------------- text completions


def _detokenize(svc: Services, model: str, tokens: list[int]) -> str:
    def work(engine: Engine) -> str:
        try:
            return engine.detokenize(tokens)
        except InvalidRequest:
            raise  # the engine's own message (an id outside the vocabulary, a remote)
        except Exception as exc:  # out-of-vocabulary ids
            raise InvalidRequest(f"token ids are not valid for {model}: {exc}") from None
    return svc.scheduler.with_engine(model, work)


def _completion_events(chunks: Chunks, events: CompletionEvents, *, include_usage: bool,
                       logprobs: bool) -> Generator[bytes, None, None]:
    offset = 0  # where the next chunk's text starts in the whole completion
    for chunk in chunks:
        if logprobs:
            if chunk.text or chunk.logprobs:
                lp = oa.completion_logprobs(chunk.logprobs, offset)
                offset += len(chunk.text)
                yield events.event(chunk.text, logprobs=lp)
        elif chunk.text:
            yield events.text(chunk.text)  # the common case
    yield events.event("", finish=oa.finish_reason(chunks.final))
    yield from _closing(chunks.final.usage, events, include_usage)


@router.post("/v1/completions", response_model=s.Completion, responses=_ERRORS)
async def completions(body: s.CompletionRequest, request: Request) -> Any:
    """OpenAI (legacy) text completions, streamed or whole."""
    svc, info = _services(request), _info(request)
    _check_model(svc, info, body.model)
    params = oq.sampling_params(body, _limits(svc))
    prompt = oq.completion_prompt(body.prompt)
    if isinstance(prompt, list):
        prompt = await anyio.to_thread.run_sync(_detokenize, svc, body.model, prompt)
    cancel = threading.Event()
    if body.suffix is not None:  # fill-in-the-middle: the prompt is the prefix
        stream = svc.scheduler.stream_infill(body.model, prompt, body.suffix, params, cancel)
    else:
        stream = svc.scheduler.stream_completion(body.model, prompt, params, cancel)
    chunks = Chunks(stream, info)
    rid, created = "cmpl-" + info.request_id, int(time.time())
    if body.stream:
        include = bool(body.stream_options and body.stream_options.include_usage)
        events = CompletionEvents(request_id=rid, model=body.model, created=created)
        return await start_stream(request, guarded(_completion_events(
            chunks, events, include_usage=include, logprobs=body.logprobs is not None),
            _stream_error, info=info), cancel)
    text, _, final, logprobs = await watch_disconnect(
        request, cancel, lambda: anyio.to_thread.run_sync(drain, chunks))
    return oa.text_completion(request_id=rid, model=body.model, created=created, text=text,
                              final=final,
                              logprobs=logprobs if body.logprobs is not None else None)


# ---------------------------------------------------------------- embeddings


def _embed(svc: Services, model: str, inputs: list[str | list[int]]
           ) -> tuple[list[list[float]], int]:
    """Vectors for ``inputs`` (cache first) and the prompt token count, in one engine turn.

    Tokens are the model's own count: the local tokenizer's, or the remote's
    ``usage.prompt_tokens`` for the texts it embedded (texts served from the cache, and
    those of a remote that reports no usage, are estimated by its ``tokenize``).
    """
    def work(engine: Engine) -> tuple[list[list[float]], int]:
        texts = [i if isinstance(i, str) else engine.detokenize(i) for i in inputs]
        keys = [embedding_key(model, t) for t in texts]
        vectors: list[list[float] | None] = [svc.embeddings.get(k) for k in keys]
        for v in vectors:
            svc.metrics.cache_event("embeddings", v is not None)
        missing = [i for i, v in enumerate(vectors) if v is None]
        counted: int | None = None
        if missing:
            fresh, counted = engine.embed_counted([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                vectors[i] = vector
                svc.embeddings.put(keys[i], vector)
        embedded = set(missing)
        uncounted = texts if counted is None else [t for i, t in enumerate(texts)
                                                   if i not in embedded]
        tokens = (counted or 0) + sum(len(engine.tokenize(t, add_bos=True, special=False))
                                      for t in uncounted)
        return [v for v in vectors if v is not None], tokens
    result: tuple[list[list[float]], int] = svc.scheduler.with_engine(model, work)
    return result


@router.post("/v1/embeddings", response_model=s.EmbeddingList, responses=_ERRORS)
async def embeddings(body: s.EmbeddingRequest, request: Request) -> s.EmbeddingList:
    """OpenAI embeddings: texts or token ids, floats or base64."""
    svc, info = _services(request), _info(request)
    _check_model(svc, info, body.model)
    if body.dimensions is not None:
        raise InvalidRequest("dimensions is not supported; the model's own width is used",
                             param="dimensions")
    inputs = oq.embedding_inputs(body.input)
    if any(isinstance(i, str) and not i for i in inputs):
        raise InvalidRequest("input must not contain empty strings", param="input")
    vectors, tokens = await anyio.to_thread.run_sync(_embed, svc, body.model, inputs)
    info.tokens_in = tokens
    return s.EmbeddingList(
        model=body.model, usage=s.UsageOut(prompt_tokens=tokens, total_tokens=tokens),
        data=[s.EmbeddingItem(index=i, embedding=oa.encode_embedding(v, body.encoding_format))
              for i, v in enumerate(vectors)])


# ---------------------------------------------------------------- rerank


def _rerank(svc: Services, model: str, query: str, texts: list[str]) -> tuple[list[float], int]:
    """Scores for ``texts`` and the tokens read, in one turn of the scheduler's gate."""
    def work(engine: Engine) -> tuple[list[float], int]:
        scores: list[float] = engine.rerank(query, texts)
        # Each pair is query + separator + document + end, cut to the window like the
        # engine cuts it; counted so key budgets see what a rerank costs.
        head = len(engine.tokenize(query, add_bos=True, special=False)) + 2
        window = engine.report.context_length  # per request, as loaded
        tokens = sum(min(window, head + len(engine.tokenize(t, add_bos=False, special=False)))
                     for t in texts)
        return scores, tokens
    result: tuple[list[float], int] = svc.scheduler.with_engine(model, work)
    return result


@router.post("/v1/rerank", response_model=s.RerankResponse, response_model_exclude_none=True,
             responses=_ERRORS)
async def rerank(body: s.RerankRequest, request: Request) -> s.RerankResponse:
    """Documents ordered by a cross-encoder reranker's relevance to the query, best first."""
    svc, info = _services(request), _info(request)
    _check_model(svc, info, body.model)
    texts = oq.rerank_texts(body.documents)
    kind, pooling = await anyio.to_thread.run_sync(svc.models.kind, body.model)
    oq.check_reranker(body.model, kind, pooling)
    scores, tokens = await anyio.to_thread.run_sync(_rerank, svc, body.model, body.query, texts)
    info.tokens_in = tokens
    return oa.rerank_response(request_id="rerank-" + info.request_id, model=body.model,
                              texts=texts, scores=scores, top_n=body.top_n,
                              return_documents=body.return_documents, tokens=tokens)
