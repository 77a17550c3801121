"""The endpoints: models, chat and text completions, embeddings, rerank, health, metrics.

The scheduler's iterators block, so each chunk is pulled on a worker thread, one at a
time. The first chunk is pulled before the response starts, so queue-full, unknown
model and context overflow still answer with their own status. When the client goes
away the request's cancel event is set: the engine stops within one token and the
scheduler's gate is released by closing the iterator.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any, TypeVar

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from desktop.engine.types import Chunk, TokenLogprob
from desktop.errors import InvalidRequest, ModelNotFound
from desktop.server import openai as oa
from desktop.server import schemas as s
from desktop.server.app import RequestInfo, Services
from desktop.server.cache import embedding_key, is_deterministic, request_key
from desktop.server.metrics import Gauges
from desktop.server.toolcalls import StreamGate

router = APIRouter()
T = TypeVar("T")
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
    if not svc.models.has(model):
        ids = svc.models.ids()
        shown = ", ".join(ids) or "none; start the server with --model"
        raise ModelNotFound(f"the model '{model}' does not exist here; available: {shown}",
                            param="model")


def _limits(svc: Services) -> oa.Limits:
    return oa.Limits(max_tokens=svc.settings.max_tokens_limit,
                     timeout_s=svc.settings.generation_timeout_s)


async def _watch_disconnect(request: Request, cancel: threading.Event,
                            work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work``; if the client disconnects meanwhile, set ``cancel``."""
    result: list[T] = []

    async def watch() -> None:
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                cancel.set()
                return

    failure: list[Exception] = []
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            result.append(await work())
        except Exception as exc:  # re-raised bare below, not wrapped in an ExceptionGroup
            failure.append(exc)
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return result[0]


def _close(stream: object) -> None:
    """Close a generator so its ``finally`` (the scheduler's gate) runs now."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()


def _next(stream: Iterator[T]) -> T | None:
    return next(stream, None)


class EventStream(StreamingResponse):
    """SSE that cancels generation when the client leaves and always frees the engine."""

    def __init__(self, content: AsyncIterable[bytes], cancel: threading.Event,
                 close: Callable[[], None]) -> None:
        super().__init__(content, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self._cancel = cancel
        self._close = close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Stream until done or disconnected; then close the engine stream off-loop."""
        async def watch() -> None:
            await self.listen_for_disconnect(receive)
            self._cancel.set()
            group.cancel_scope.cancel()

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                try:
                    await self.stream_response(send)
                except OSError:
                    self._cancel.set()
                group.cancel_scope.cancel()
        finally:
            self._cancel.set()  # a finished stream ignores it; any early exit stops the engine
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._close)


class _Pump:
    """Runs a blocking event iterator on a worker thread, ahead of the network.

    The engine never waits for the event loop: each event is queued as soon as it is
    made, and whatever piled up while the previous write went out is sent in one write.
    (Pulling one event per thread hop made generation pause for every send: ~0.8 ms a
    token, half the speed of the tiny test model and ~5% of a real one.)
    """

    _END = object()

    def __init__(self, events: Generator[bytes, None, None]) -> None:
        self._events = events
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._finished = threading.Event()
        self._started = False

    def _produce(self, loop: asyncio.AbstractEventLoop, ready: asyncio.Event) -> None:
        try:
            for item in self._events:
                self._queue.put(item)
                loop.call_soon_threadsafe(ready.set)
        except BaseException as exc:  # handed to the consumer, raised there
            self._queue.put(exc)
        finally:
            self._queue.put(self._END)
            self._finished.set()
            with contextlib.suppress(RuntimeError):  # the loop may already be closed
                loop.call_soon_threadsafe(ready.set)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        self._started = True
        # _produce never raises (it queues its exception), so the future needs no awaiting.
        loop.run_in_executor(None, self._produce, loop, ready)
        while True:
            await ready.wait()
            ready.clear()  # before draining: a put after this wakes the next wait
            batch: list[bytes] = []
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is self._END:
                    if batch:
                        yield b"".join(batch)
                    return
                if isinstance(item, BaseException):
                    raise item
                batch.append(item)  # type: ignore[arg-type]
            if batch:
                yield b"".join(batch)

    def close(self) -> None:
        """Free the engine: wait for the producer (the caller set cancel), then close."""
        if self._started:
            self._finished.wait()
        self._events.close()


async def _first_chunk(request: Request, stream: Iterator[Chunk], cancel: threading.Event,
                       info: RequestInfo) -> Chunk:
    first = await _watch_disconnect(request, cancel,
                                    lambda: anyio.to_thread.run_sync(_next, stream))
    if first is None:  # the engine always ends with a final chunk; be safe anyway
        first = Chunk(finish_reason="stop")
    info.ttft_s = time.perf_counter() - info.started
    return first


def _drain(first: Chunk, stream: Iterator[Chunk]
           ) -> tuple[str, str, Chunk, list[TokenLogprob]]:
    text, reasoning, final = [first.text], [first.reasoning], first
    logprobs = list(first.logprobs)
    if not first.is_final:
        for chunk in stream:
            text.append(chunk.text)
            reasoning.append(chunk.reasoning)
            logprobs.extend(chunk.logprobs)
            final = chunk
    return "".join(text), "".join(reasoning), final, logprobs


def _count(info: RequestInfo, final: Chunk) -> None:
    if final.usage is not None:
        info.tokens_in, info.tokens_out = final.usage.prompt_tokens, final.usage.completion_tokens


# ---------------------------------------------------------------- models, health, metrics


@router.get("/v1/models", response_model=s.ModelList, responses=_ERRORS)
def list_models(request: Request) -> s.ModelList:
    """Every model a request may name."""
    return s.ModelList(data=[s.ModelCard(id=m) for m in _services(request).models.ids()])


@router.get("/health", response_model=s.Health)
def health(request: Request) -> s.Health:
    """Liveness and load, without authentication."""
    sched = _services(request).scheduler
    return s.Health(busy=sched.busy, queue_depth=sched.queue_depth,
                    loaded_models=[m.model_id for m in sched.loaded()])


@router.get("/metrics", response_class=PlainTextResponse, responses=_ERRORS)
def metrics(request: Request) -> PlainTextResponse:
    """Prometheus text exposition."""
    svc = _services(request)
    gauges = Gauges(svc.scheduler.queue_depth, svc.scheduler.busy,
                    [m.model_id for m in svc.scheduler.loaded()])
    return PlainTextResponse(svc.metrics.render(gauges),
                             media_type="text/plain; version=0.0.4; charset=utf-8")


# ---------------------------------------------------------------- chat


def _chat_events(first: Chunk, stream: Iterator[Chunk], *, rid: str, model: str, created: int,
                 tools: list[dict[str, Any]] | None, forced: bool, logprobs: bool,
                 include_usage: bool, info: RequestInfo) -> Generator[bytes, None, None]:
    pending: list[TokenLogprob] = []  # logprobs of tokens whose text is not sent yet

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        lp = None
        if logprobs and (pending or finish is not None):
            lp = list(pending)
            pending.clear()
        return oa.sse(oa.chat_delta(request_id=rid, model=model, created=created, delta=delta,
                                    finish=finish, with_usage_field=include_usage,
                                    logprobs=lp))

    yield event({"role": "assistant", "content": ""})
    # With tools offered, words stream until something may be a call; that is held
    # until the answer is complete and parsed.
    gate = StreamGate(oa.tool_names(tools), hold_all=forced) if tools else None
    chunk: Chunk | None = first
    final = first
    try:
        while chunk is not None:
            final = chunk
            pending.extend(chunk.logprobs)
            delta = oa.chunk_delta(chunk)
            if gate is not None:
                delta.pop("content", None)
                words = gate.feed(chunk.text)
                if words:
                    delta["content"] = words
            if delta:
                yield event(delta)
            if chunk.is_final:
                break
            chunk = next(stream, None)
    finally:
        _close(stream)  # releases the scheduler's gate, also when the client left
    _count(info, final)
    calls: tuple[Any, ...] = ()
    if gate is not None:
        rest, calls = gate.finish()
        if rest:
            yield event({"content": rest})
        if calls:
            yield event(oa.tool_call_deltas(calls))
    yield event({}, oa.finish_reason(final, calls))
    if include_usage:
        yield oa.sse(oa.chat_delta(request_id=rid, model=model, created=created, delta={},
                                   usage=oa.usage_out(final.usage)))
    yield oa.DONE


@router.post("/v1/chat/completions", response_model=s.ChatCompletion, responses=_ERRORS)
async def chat_completions(body: s.ChatCompletionRequest, request: Request) -> Any:
    """OpenAI chat completions, streamed (SSE) or whole."""
    svc, info = _services(request), _info(request)
    _check_model(svc, info, body.model)
    messages = oa.to_messages(body.messages)
    params = oa.sampling_params(body, _limits(svc))
    tools = oa.tools_for_engine(body)
    raw = body.model_dump(mode="json", by_alias=True, exclude_none=True)
    cache_key = request_key("chat", raw)
    cacheable = svc.responses is not None and not body.stream and is_deterministic(raw)
    if cacheable and svc.responses is not None:
        hit = svc.responses.get(cache_key)
        svc.metrics.cache_event("response", hit is not None)
        if hit is not None:
            return JSONResponse({**hit, "id": "chatcmpl-" + info.request_id})
    cancel = threading.Event()
    stream = svc.scheduler.stream_chat(body.model, messages, params, cancel, tools)
    rid, created = "chatcmpl-" + info.request_id, int(time.time())
    try:
        first = await _first_chunk(request, stream, cancel, info)
    except BaseException:
        _close(stream)
        raise
    if body.stream:
        include = bool(body.stream_options and body.stream_options.include_usage)
        events = _chat_events(first, stream, rid=rid, model=body.model, created=created,
                              tools=tools, forced=oa.forced_tools(body) is not None,
                              logprobs=bool(body.logprobs), include_usage=include, info=info)
        pump = _Pump(events)
        return EventStream(pump, cancel, pump.close)
    try:
        text, reasoning, final, logprobs = await _watch_disconnect(
            request, cancel, lambda: anyio.to_thread.run_sync(_drain, first, stream))
    finally:
        await anyio.to_thread.run_sync(_close, stream)
    _count(info, final)
    result = oa.chat_completion(request_id=rid, model=body.model, created=created, text=text,
                                reasoning=reasoning, final=final, tools=tools,
                                logprobs=logprobs if body.logprobs else None)
    data = result.model_dump(mode="json")
    if cacheable and svc.responses is not None and final.finish_reason in ("stop", "length"):
        svc.responses.put(cache_key, data)
    return JSONResponse(data)


# ---------------------------------------------------------------- text completions


def _detokenize(svc: Services, model: str, tokens: list[int]) -> str:
    def work(engine: Any) -> str:
        detok = getattr(engine, "detokenize", None)
        if detok is None:
            raise InvalidRequest("this model cannot take token ids; send text", param="prompt")
        try:
            return str(detok(tokens))
        except Exception as exc:  # out-of-vocabulary ids
            raise InvalidRequest(f"token ids are not valid for {model}: {exc}") from None
    return str(svc.scheduler.with_engine(model, work))


def _completion_events(first: Chunk, stream: Iterator[Chunk], *, rid: str, model: str,
                       created: int, include_usage: bool, logprobs: bool, info: RequestInfo
                       ) -> Generator[bytes, None, None]:
    chunk: Chunk | None = first
    final = first
    offset = 0  # where the next chunk's text starts in the whole completion
    try:
        while chunk is not None:
            final = chunk
            if chunk.text or (logprobs and chunk.logprobs):
                lp = oa.completion_logprobs(chunk.logprobs, offset) if logprobs else None
                offset += len(chunk.text)
                yield oa.sse(oa.completion_delta(request_id=rid, model=model, created=created,
                                                 text=chunk.text, logprobs=lp))
            if chunk.is_final:
                break
            chunk = next(stream, None)
    finally:
        _close(stream)
    _count(info, final)
    yield oa.sse(oa.completion_delta(request_id=rid, model=model, created=created, text="",
                                     finish=oa.finish_reason(final)))
    if include_usage:
        yield oa.sse(oa.completion_delta(request_id=rid, model=model, created=created, text="",
                                         usage=oa.usage_out(final.usage)))
    yield oa.DONE


@router.post("/v1/completions", response_model=s.Completion, responses=_ERRORS)
async def completions(body: s.CompletionRequest, request: Request) -> Any:
    """OpenAI (legacy) text completions, streamed or whole."""
    svc, info = _services(request), _info(request)
    _check_model(svc, info, body.model)
    params = oa.sampling_params(body, _limits(svc))
    prompt = oa.completion_prompt(body.prompt)
    if isinstance(prompt, list):
        prompt = await anyio.to_thread.run_sync(_detokenize, svc, body.model, prompt)
    cancel = threading.Event()
    if body.suffix is not None:  # fill-in-the-middle: the prompt is the prefix
        stream = svc.scheduler.stream_infill(body.model, prompt, body.suffix, params, cancel)
    else:
        stream = svc.scheduler.stream_completion(body.model, prompt, params, cancel)
    rid, created = "cmpl-" + info.request_id, int(time.time())
    try:
        first = await _first_chunk(request, stream, cancel, info)
    except BaseException:
        _close(stream)
        raise
    if body.stream:
        include = bool(body.stream_options and body.stream_options.include_usage)
        events = _completion_events(first, stream, rid=rid, model=body.model, created=created,
                                    include_usage=include, logprobs=body.logprobs is not None,
                                    info=info)
        pump = _Pump(events)
        return EventStream(pump, cancel, pump.close)
    try:
        text, _, final, logprobs = await _watch_disconnect(
            request, cancel, lambda: anyio.to_thread.run_sync(_drain, first, stream))
    finally:
        await anyio.to_thread.run_sync(_close, stream)
    _count(info, final)
    return oa.text_completion(request_id=rid, model=body.model, created=created, text=text,
                              final=final,
                              logprobs=logprobs if body.logprobs is not None else None)


# ---------------------------------------------------------------- embeddings


def _embed(svc: Services, model: str, inputs: list[str | list[int]]
           ) -> tuple[list[list[float]], int]:
    """Vectors for ``inputs`` (cache first) and the prompt token count, in one engine turn."""
    def work(engine: Any) -> tuple[list[list[float]], int]:
        texts = [i if isinstance(i, str) else engine.detokenize(i) for i in inputs]
        tokens = sum(len(engine.tokenize(t, add_bos=True, special=False)) for t in texts)
        keys = [embedding_key(model, t) for t in texts]
        vectors: list[list[float] | None] = [svc.embeddings.get(k) for k in keys]
        for v in vectors:
            svc.metrics.cache_event("embeddings", v is not None)
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            fresh = engine.embed([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                vectors[i] = vector
                svc.embeddings.put(keys[i], vector)
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
    inputs = oa.embedding_inputs(body.input)
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
    def work(engine: Any) -> tuple[list[float], int]:
        scores: list[float] = engine.rerank(query, texts)
        # Each pair is query + separator + document + end, cut to the window like the
        # engine cuts it; counted so key budgets see what a rerank costs.
        head = len(engine.tokenize(query, add_bos=True, special=False)) + 2
        window = int(engine.context_length)
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
    texts = oa.rerank_texts(body.documents)
    kind, pooling = await anyio.to_thread.run_sync(svc.models.kind, body.model)
    oa.check_reranker(body.model, kind, pooling)
    scores, tokens = await anyio.to_thread.run_sync(_rerank, svc, body.model, body.query, texts)
    info.tokens_in = tokens
    return oa.rerank_response(request_id="rerank-" + info.request_id, model=body.model,
                              texts=texts, scores=scores, top_n=body.top_n,
                              return_documents=body.return_documents, tokens=tokens)
