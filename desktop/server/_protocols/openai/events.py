"""Pure translation of the engine's plain values into OpenAI responses and SSE events.

No I/O and no state: engine chunks, usage and scores become response bodies, stream
events and error bodies. Requests go the other way in ``translate``.
Everything here is unit-tested without a server.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from desktop.engine import Delta, TokenLogprob, ToolCall, Usage
from desktop.server._answer import finish_reason
from desktop.server._error_bodies import ErrorBody, ErrorDetail
from desktop.server._protocols.openai import schemas

DONE = b"data: [DONE]\n\n"


def relevance(score: float) -> float:
    """A reranker's raw logit as a 0-1 relevance (the sigmoid Jina and Cohere report)."""
    if score >= 0:
        return 1.0 / (1.0 + math.exp(-score))
    small = math.exp(score)  # this form cannot overflow for very negative logits
    return small / (1.0 + small)


def rerank_response(
    *,
    request_id: str,
    model: str,
    texts: Sequence[str],
    scores: Sequence[float],
    top_n: int | None,
    return_documents: bool,
    tokens: int,
) -> schemas.RerankResponse:
    """Results best first (ties keep request order), cut to ``top_n``."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])[:top_n]
    return schemas.RerankResponse(
        id=request_id,
        model=model,
        usage=schemas.RerankUsage(prompt_tokens=tokens, total_tokens=tokens),
        results=[
            schemas.RerankResult(
                index=i,
                relevance_score=relevance(scores[i]),
                document=schemas.RerankDocumentOut(text=texts[i]) if return_documents else None,
            )
            for i in order
        ],
    )


# ---------------------------------------------------------------- engine → responses


def usage_out(usage: Usage | None) -> schemas.UsageOut:
    """Usage in OpenAI's shape."""
    u = usage or Usage()
    return schemas.UsageOut(
        prompt_tokens=u.prompt_tokens,
        completion_tokens=u.completion_tokens,
        total_tokens=u.total_tokens,
        prompt_tokens_details=schemas.PromptTokensDetails(cached_tokens=u.cached_tokens),
    )


def tool_calls_out(calls: Sequence[ToolCall]) -> list[schemas.ToolCallOut] | None:
    """Tool calls in OpenAI's shape (None when there are none)."""
    if not calls:
        return None
    return [
        schemas.ToolCallOut(
            id=c.id, function=schemas.FunctionCallOut(name=c.name, arguments=c.arguments)
        )
        for c in calls
    ]


def _bytes(token: str) -> list[int]:
    return list(token.encode("utf-8"))


def chat_logprobs(logprobs: Sequence[TokenLogprob] | None) -> schemas.ChatLogprobs | None:
    """Chat ``logprobs`` for the sampled tokens (None when they were not asked for)."""
    if logprobs is None:
        return None
    return schemas.ChatLogprobs(
        content=[
            schemas.TokenLogprobOut(
                token=lp.token,
                logprob=lp.logprob,
                bytes=_bytes(lp.token),
                top_logprobs=[
                    schemas.TopLogprob(token=t, logprob=v, bytes=_bytes(t)) for t, v in lp.top
                ],
            )
            for lp in logprobs
        ]
    )


def completion_logprobs(
    logprobs: Sequence[TokenLogprob] | None, offset: int = 0
) -> schemas.CompletionLogprobs | None:
    """Legacy completion ``logprobs``; ``offset`` is where these tokens start in the text."""
    if logprobs is None:
        return None
    offsets = []
    for lp in logprobs:
        offsets.append(offset)
        offset += len(lp.token)
    return schemas.CompletionLogprobs(
        tokens=[lp.token for lp in logprobs],
        token_logprobs=[lp.logprob for lp in logprobs],
        top_logprobs=[dict(lp.top) for lp in logprobs],
        text_offset=offsets,
    )


def chat_completion(
    *,
    request_id: str,
    model: str,
    created: int,
    text: str,
    reasoning: str,
    final: Delta,
    calls: Sequence[ToolCall] = (),
    logprobs: Sequence[TokenLogprob] | None = None,
) -> schemas.ChatCompletion:
    """A whole chat answer: its words, reasoning and the tool calls the engine found
    (``logprobs`` None: not asked for)."""
    message = schemas.ChatMessageOut(
        content=text if text or not calls else None,
        reasoning_content=reasoning or None,
        tool_calls=tool_calls_out(calls),
    )
    return schemas.ChatCompletion(
        id=request_id,
        created=created,
        model=model,
        usage=usage_out(final.usage),
        choices=[
            schemas.ChatChoice(
                message=message,
                logprobs=chat_logprobs(logprobs),
                finish_reason=finish_reason(final, calls),
            )
        ],
    )


def text_completion(
    *,
    request_id: str,
    model: str,
    created: int,
    text: str,
    final: Delta,
    logprobs: Sequence[TokenLogprob] | None = None,
) -> schemas.Completion:
    """A whole text completion (``logprobs`` None: not asked for)."""
    return schemas.Completion(
        id=request_id,
        created=created,
        model=model,
        usage=usage_out(final.usage),
        choices=[
            schemas.CompletionChoice(
                text=text,
                finish_reason=finish_reason(final),
                logprobs=completion_logprobs(logprobs),
            )
        ],
    )


class FunctionDelta(TypedDict):
    """A streamed call's function: its whole name and arguments, sent once."""

    name: str
    arguments: str


class ToolCallDelta(TypedDict):
    """One tool call in a delta."""

    index: int
    id: str
    type: Literal["function"]
    function: FunctionDelta


class ChatDelta(TypedDict, total=False):
    """A ``chat.completion.chunk`` choice's ``delta``: only what this event adds."""

    role: Literal["assistant"]
    content: str
    reasoning_content: str
    tool_calls: list[ToolCallDelta]


def chat_delta(
    *,
    request_id: str,
    model: str,
    created: int,
    delta: ChatDelta,
    finish: str | None = None,
    usage: schemas.UsageOut | None = None,
    with_usage_field: bool = False,
    logprobs: Sequence[TokenLogprob] | None = None,
) -> dict[str, object]:
    """One ``chat.completion.chunk`` event body (JSON, as sent)."""
    lp = chat_logprobs(logprobs)
    body: dict[str, object] = {
        "id": request_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "system_fingerprint": None,
        "choices": []
        if usage is not None
        else [
            {
                "index": 0,
                "delta": delta,
                "logprobs": lp.model_dump() if lp else None,
                "finish_reason": finish,
            }
        ],
    }
    if usage is not None or with_usage_field:
        body["usage"] = usage.model_dump() if usage is not None else None
    return body


def tool_call_deltas(calls: Sequence[ToolCall]) -> ChatDelta:
    """A delta carrying whole tool calls (sent once, when the answer is complete)."""
    return {
        "tool_calls": [
            {
                "index": i,
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(calls)
        ]
    }


def completion_delta(
    *,
    request_id: str,
    model: str,
    created: int,
    text: str,
    finish: str | None = None,
    usage: schemas.UsageOut | None = None,
    logprobs: schemas.CompletionLogprobs | None = None,
) -> dict[str, object]:
    """One streamed ``text_completion`` event body (JSON, as sent)."""
    body: dict[str, object] = {
        "id": request_id,
        "object": "text_completion",
        "created": created,
        "model": model,
        "choices": []
        if usage is not None
        else [
            {
                "index": 0,
                "text": text,
                "logprobs": logprobs.model_dump() if logprobs else None,
                "finish_reason": finish,
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage.model_dump()
    return body


def sse(body: Mapping[str, object]) -> bytes:
    """One server-sent event carrying ``body`` as JSON."""
    return b"data: " + json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\n\n"


def encode_embedding(vector: Sequence[float], encoding: str) -> list[float] | str:
    """A vector as floats, or as base64 of little-endian float32 (what the client decodes)."""
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return list(vector)


def error_body(
    message: str, *, type_: str, code: str | None, param: str | None = None
) -> dict[str, Any]:  # ErrorBody's model_dump: JSON, and the other shapes' peer
    """The OpenAI error envelope."""
    return ErrorBody(
        error=ErrorDetail(message=message, type=type_, param=param, code=code)
    ).model_dump()


def stream_error(message: str, *, type_: str, code: str | None) -> bytes:
    """The end of a chat/completions stream that failed mid-way: the error, then ``[DONE]``.

    As OpenAI and vLLM send it: a ``data:`` event whose body is the error envelope (the
    ``openai`` client raises an ``APIError`` with its message); ``[DONE]`` after it, as
    vLLM sends, so clients that read until ``[DONE]`` end cleanly too.
    """
    return sse(error_body(message, type_=type_, code=code)) + DONE
