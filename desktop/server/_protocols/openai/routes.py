"""The OpenAI endpoints: models, chat and text completions, embeddings, rerank, health, metrics.

Chat and text completions run through the one generation pipeline (``generation.py``);
this module says only how a request becomes an engine call and how the answer's pieces
become OpenAI's events (``sse.ChatEvents``, ``sse.CompletionEvents``) or body.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from desktop.base.errors import (
    ContextOverflow,
    EdgeDeskError,
    InvalidRequest,
    prompt_size_params,
)
from desktop.engine import Engine, TokenLogprob
from desktop.server import _image_parts as images
from desktop.server import _leniency as leniency
from desktop.server._answer import Ending, Piece, WholeAnswer, finish_reason
from desktop.server._cache import LRUCache, is_deterministic, request_key
from desktop.server._deps import CallDep, ServicesDep, visible
from desktop.server._embeddings import check_inputs, embed
from desktop.server._error_bodies import ERROR_RESPONSES
from desktop.server._generation import SSE, generate
from desktop.server._metrics import gauges_from
from desktop.server._protocols.openai import events as openai
from desktop.server._protocols.openai import schemas, translate
from desktop.server._protocols.openai.sse import ChatEvents, CompletionEvents
from desktop.server._services import Services
from desktop.server._strict_json import StrictJSONRoute
from desktop.server._token_count import user_texts

router = APIRouter(route_class=StrictJSONRoute)


# ---------------------------------------------------------------- models, health, metrics


@router.get(
    "/v1/models",
    response_model=schemas.ModelList,
    responses=ERROR_RESPONSES,
    response_model_exclude_none=True,
)
def list_models(call: CallDep) -> schemas.ModelList:
    """Every model the request's key may name; a loaded local one says where it runs."""
    services = call.services
    placed = {m.model_id: m.report.placement for m in services.scheduler.loaded()}

    def info(model_id: str) -> schemas.EdgeDeskModelInfo | None:
        where = placed.get(model_id)
        if where is None:
            return None
        return schemas.EdgeDeskModelInfo(
            placement=where.describe(),
            layers_total=where.layers_total,
            layers_offloaded=where.layers_offloaded,
            devices=list(where.devices),
        )

    def capabilities(model_id: str) -> list[str] | None:
        # "vision" only for what is known to see (a local model with a projector): a
        # remote model takes pictures too, but whether it sees is its server's to say.
        try:
            sees = services.models.describe(model_id).get("vision") is True
        except (EdgeDeskError, OSError):  # e.g. its file went away since it was listed
            return None  # listed for what it is; a request to it says what is wrong
        return ["completion", "vision"] if sees else None

    return schemas.ModelList(
        data=[
            schemas.ModelCard(id=m, capabilities=capabilities(m), edgedesk=info(m))
            for m in visible(call.info, services.models.ids())
        ]
    )


@router.get("/health", response_model=schemas.Health)
def health(services: ServicesDep) -> schemas.Health:
    """Liveness and load, without authentication."""
    sched = services.scheduler
    return schemas.Health(
        busy=sched.busy,
        queue_depth=sched.queue_depth,
        loaded_models=[m.model_id for m in sched.loaded()],
    )


@router.get("/metrics", response_class=PlainTextResponse, responses=ERROR_RESPONSES)
def metrics(
    call: CallDep,
    fmt: str = Query("prometheus", alias="format", pattern="^(prometheus|json)$"),
) -> Response:
    """Prometheus text exposition, or the same figures as JSON with ``?format=json``;
    a key scoped to models sees only those models' gauges."""
    services = call.services
    gauges = gauges_from(services.scheduler).within(call.info.key_models)
    if fmt == "json":
        return JSONResponse(services.metrics.snapshot(gauges))
    return PlainTextResponse(
        services.metrics.render(gauges), media_type="text/plain; version=0.0.4; charset=utf-8"
    )


# ---------------------------------------------------------------- chat and text completions


def _stream_error(error: EdgeDeskError) -> bytes:
    return openai.stream_error(error.message, type_=error.error_type, code=error.code)


class ChatAnswer:
    """A chat completion's answer: ``chat.completion.chunk`` events, or one object."""

    media_type = SSE
    keepalive = b""  # no event for it in this protocol

    def __init__(
        self,
        body: schemas.ChatCompletionRequest,
        request_id: str,
        tools: bool,
        cached: tuple[LRUCache[dict[str, Any]], str] | None,  # the answer cache: JSON bodies
    ) -> None:
        # tools: whether tools were offered (a delta's words then come after its reasoning)
        self._body, self._id, self._tools, self._cached = body, request_id, tools, cached
        self._created = int(time.time())
        self._logprobs = bool(body.logprobs)
        self._include_usage = bool(body.stream_options and body.stream_options.include_usage)
        self._events = ChatEvents(
            request_id=request_id,
            model=body.model,
            created=self._created,
            include_usage=self._include_usage,
        )
        self._pending: list[TokenLogprob] = []  # logprobs of tokens whose text is not sent yet

    def _event(self, delta: openai.ChatDelta, finish: str | None = None) -> bytes:
        lp = None
        if self._logprobs and (self._pending or finish is not None):
            lp = list(self._pending)
            self._pending.clear()
        return self._events.event(delta, finish, lp)

    def opening(self) -> bytes:
        """The assistant role, sent with the first chunk's words."""
        return self._events.event({"role": "assistant", "content": ""})

    def piece(self, piece: Piece) -> bytes:
        """One chunk's delta: content and reasoning, with the logprobs sent so far."""
        if self._logprobs:
            self._pending.extend(piece.logprobs)
        if not piece.reasoning and not self._pending:
            # The common case: a pre-encoded event with the text spliced in.
            return self._events.content(piece.text) if piece.text else b""
        delta: openai.ChatDelta = {}
        if piece.text and not self._tools:
            delta["content"] = piece.text
        if piece.reasoning:
            delta["reasoning_content"] = piece.reasoning
        if piece.text and self._tools:  # words let through the tool-call gate come last
            delta["content"] = piece.text
        return self._event(delta) if delta else b""

    def ending(self, ending: Ending) -> bytes:
        """The tool calls, the finish reason, usage when asked, then ``[DONE]``."""
        out = self._event(openai.tool_call_deltas(ending.calls)) if ending.calls else b""
        out += self._event({}, finish_reason(ending.final, ending.calls))
        if self._include_usage:
            out += self._events.usage(ending.final.usage)
        return out + openai.DONE

    def error_event(self, error: EdgeDeskError) -> bytes:
        """OpenAI's error event."""
        return _stream_error(error)

    def whole(self, answer: WholeAnswer) -> JSONResponse:
        """The ``chat.completion`` object (kept in the response cache when it may be)."""
        text, calls = answer.split()
        result = openai.chat_completion(
            request_id=self._id,
            model=self._body.model,
            created=self._created,
            text=text,
            reasoning=answer.reasoning,
            final=answer.final,
            calls=calls,
            logprobs=answer.logprobs if self._body.logprobs else None,
        )
        data = result.model_dump(mode="json")
        if self._cached is not None and answer.final.finish_reason in ("stop", "length"):
            self._cached[0].put(self._cached[1], data)
        return JSONResponse(data)

    def finished(self) -> None:
        """Nothing to do once the answer is out."""


@router.post(
    "/v1/chat/completions", response_model=schemas.ChatCompletion, responses=ERROR_RESPONSES
)
async def chat_completions(body: schemas.ChatCompletionRequest, call: CallDep) -> Any:
    """OpenAI chat completions, streamed (SSE) or whole."""
    services, info = call.services, call.info
    call.check_model(body.model)
    messages = translate.to_messages(body.messages, limits=services.image_limits)
    images.check_images(messages, model=body.model, sees=services.models.vision)
    info.dropped_tools = leniency.labels(translate.left_out_tools(body))
    chat = translate.chat_call(body, messages, call.limits)
    # The key hashes the whole conversation: only made when the answer may be cached
    # (the cache is off by default and streams never are).
    cached: tuple[LRUCache[dict[str, Any]], str] | None = None  # JSON bodies, as sent
    if services.response_cache is not None and not body.stream:
        raw = body.model_dump(mode="json", by_alias=True, exclude_none=True)
        if is_deterministic(raw):
            cached = (services.response_cache, request_key("chat", raw))
            hit = services.response_cache.get(cached[1])
            services.metrics.cache_event("response", hit is not None)
            if hit is not None:
                return JSONResponse({**hit, "id": "chatcmpl-" + info.request_id})
    await call.refuse_over_context(body.model, user_texts(chat))
    stream = services.scheduler.stream_chat(body.model, chat, call.cancel)
    answer = ChatAnswer(body, "chatcmpl-" + info.request_id, bool(chat.tools), cached)
    return await generate(call, stream, answer, streamed=bool(body.stream))


def _detokenize(services: Services, model: str, tokens: list[int]) -> str:
    def work(engine: Engine) -> str:
        context = engine.report.context_length
        if 0 < context <= len(tokens):  # counted as ids: never turned into text first
            raise ContextOverflow(
                f"the prompt is {len(tokens)} tokens but the model's context is {context}; "
                "shorten the prompt or load the model with a larger context",
                prompt_tokens=len(tokens),
                n_ctx=context,
                kind="prompt_too_long",
                params=prompt_size_params(len(tokens), context),
            )
        try:
            return engine.detokenize(tokens)
        except InvalidRequest:
            raise  # the engine's own message (an id outside the vocabulary, a remote)
        except Exception as exc:  # out-of-vocabulary ids
            raise InvalidRequest(f"token ids are not valid for {model}: {exc}") from None

    return services.scheduler.with_engine(model, work)


class CompletionAnswer:
    """A text completion's answer: ``text_completion`` events, or one object."""

    media_type = SSE
    keepalive = b""  # no event for it in this protocol

    def __init__(self, body: schemas.CompletionRequest, request_id: str) -> None:
        self._body, self._id = body, request_id
        self._created = int(time.time())
        self._logprobs = body.logprobs is not None
        self._events = CompletionEvents(
            request_id=request_id, model=body.model, created=self._created
        )
        self._offset = 0  # where the next piece's text starts in the whole completion

    def opening(self) -> bytes:
        """Nothing: a completion's first event is its first text."""
        return b""

    def piece(self, piece: Piece) -> bytes:
        """One chunk's text, with its logprobs when asked."""
        if self._logprobs:
            if not piece.text and not piece.logprobs:
                return b""
            lp = openai.completion_logprobs(piece.logprobs, self._offset)
            self._offset += len(piece.text)
            return self._events.event(piece.text, logprobs=lp)
        return self._events.text(piece.text) if piece.text else b""  # the common case

    def ending(self, ending: Ending) -> bytes:
        """The finish reason, usage when asked, then ``[DONE]``."""
        out = self._events.event("", finish=finish_reason(ending.final))
        options = self._body.stream_options
        if options and options.include_usage:
            out += self._events.usage(ending.final.usage)
        return out + openai.DONE

    def error_event(self, error: EdgeDeskError) -> bytes:
        """OpenAI's error event."""
        return _stream_error(error)

    def whole(self, answer: WholeAnswer) -> schemas.Completion:
        """The ``text_completion`` object."""
        return openai.text_completion(
            request_id=self._id,
            model=self._body.model,
            created=self._created,
            text=answer.text,
            final=answer.final,
            logprobs=answer.logprobs if self._logprobs else None,
        )

    def finished(self) -> None:
        """Nothing to do once the answer is out."""


@router.post("/v1/completions", response_model=schemas.Completion, responses=ERROR_RESPONSES)
async def completions(body: schemas.CompletionRequest, call: CallDep) -> Any:
    """OpenAI (legacy) text completions, streamed or whole."""
    services = call.services
    call.check_model(body.model)
    params = translate.sampling_params(body, call.limits)
    prompt = translate.completion_prompt(body.prompt)
    if isinstance(prompt, list):
        prompt = await anyio.to_thread.run_sync(_detokenize, services, body.model, prompt)
    await call.refuse_over_context(body.model, [prompt, body.suffix or ""])
    if body.suffix is not None:  # fill-in-the-middle: the prompt is the prefix
        stream = services.scheduler.stream_infill(
            body.model, prompt, body.suffix, params, call.cancel
        )
    else:
        stream = services.scheduler.stream_completion(body.model, prompt, params, call.cancel)
    answer = CompletionAnswer(body, "cmpl-" + call.info.request_id)
    return await generate(call, stream, answer, streamed=bool(body.stream))


# ---------------------------------------------------------------- embeddings


@router.post("/v1/embeddings", response_model=schemas.EmbeddingList, responses=ERROR_RESPONSES)
async def embeddings(body: schemas.EmbeddingRequest, call: CallDep) -> schemas.EmbeddingList:
    """OpenAI embeddings: texts or token ids, floats or base64."""
    call.check_model(body.model)
    if body.dimensions is not None:
        raise InvalidRequest(
            "dimensions is not supported; the model's own width is used", param="dimensions"
        )
    inputs = translate.embedding_inputs(body.input)
    if any(isinstance(i, str) and not i for i in inputs):
        raise InvalidRequest("input must not contain empty strings", param="input")
    vectors, tokens = await call.compute(
        lambda cancel: embed(call.services, body.model, inputs, cancel)
    )
    call.info.tokens_in = tokens
    return schemas.EmbeddingList(
        model=body.model,
        usage=schemas.UsageOut(prompt_tokens=tokens, total_tokens=tokens),
        data=[
            schemas.EmbeddingItem(
                index=i, embedding=openai.encode_embedding(v, body.encoding_format)
            )
            for i, v in enumerate(vectors)
        ],
    )


# ---------------------------------------------------------------- rerank


def _rerank(
    services: Services, model: str, query: str, texts: list[str], cancel: threading.Event
) -> tuple[list[float], int]:
    """Scores for ``texts`` and the tokens read, in one turn of the scheduler's gate;
    ``cancel`` set (the client left) stops it between decodes."""
    check_inputs([query], "query")
    check_inputs(texts, "documents")

    def work(engine: Engine) -> tuple[list[float], int]:
        scores: list[float] = engine.rerank(query, texts, cancel)
        # Each pair is query + separator + document + end, cut to the window like the
        # engine cuts it; counted so key budgets see what a rerank costs.
        head = len(engine.tokenize(query, add_bos=True, special=False)) + 2
        window = engine.report.context_length  # per request, as loaded
        tokens = sum(
            min(window, head + len(engine.tokenize(t, add_bos=False, special=False))) for t in texts
        )
        return scores, tokens

    result: tuple[list[float], int] = services.scheduler.with_engine(model, work, cancel)
    return result


@router.post(
    "/v1/rerank",
    response_model=schemas.RerankResponse,
    response_model_exclude_none=True,
    responses=ERROR_RESPONSES,
)
async def rerank(body: schemas.RerankRequest, call: CallDep) -> schemas.RerankResponse:
    """Documents ordered by a cross-encoder reranker's relevance to the query, best first."""
    services = call.services
    call.check_model(body.model)
    texts = translate.rerank_texts(body.documents)
    kind, pooling = await anyio.to_thread.run_sync(services.models.kind, body.model)
    translate.check_reranker(body.model, kind, pooling)
    scores, tokens = await call.compute(
        lambda cancel: _rerank(services, body.model, body.query, texts, cancel)
    )
    call.info.tokens_in = tokens
    return openai.rerank_response(
        request_id="rerank-" + call.info.request_id,
        model=body.model,
        texts=texts,
        scores=scores,
        top_n=body.top_n,
        return_documents=body.return_documents,
        tokens=tokens,
    )
