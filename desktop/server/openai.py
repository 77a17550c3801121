"""Pure translation between the OpenAI wire format and the engine's plain values.

No I/O and no state: requests become ``Message``/``GenerationParams``; engine chunks
become response bodies and SSE events. Everything here is unit-tested without a server.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.engine.types import Chunk, GenerationParams, Message, TokenLogprob, ToolCall, Usage
from desktop.errors import InvalidRequest
from desktop.server import schemas as s
from desktop.server.toolcalls import ParsedAnswer, parse_tool_calls

DONE = b"data: [DONE]\n\n"
MAX_RERANK_DOCUMENTS = 1000  # one request's worth; a reranker orders candidates, not corpora
POOLING_NAMES = {0: "none", 1: "mean", 2: "cls", 3: "last", 4: "rank"}  # llama.cpp's enum


@dataclass(frozen=True)
class Limits:
    """The server's limits that shape generation parameters."""

    max_tokens: int = 8192
    timeout_s: float | None = 600.0


# ---------------------------------------------------------------- requests → engine


def _text_of(content: str | list[s.ContentPart] | None, index: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    parts = []
    for part in content:
        if part.type != "text" or part.text is None:
            raise InvalidRequest(
                f"messages[{index}]: content part type '{part.type}' is not supported; "
                "send text parts only", param=f"messages.{index}.content")
        parts.append(part.text)
    return "".join(parts)


def to_messages(messages: Sequence[s.ChatMessageIn]) -> list[Message]:
    """The conversation as engine messages (``developer`` is treated as ``system``)."""
    out: list[Message] = []
    for i, m in enumerate(messages):
        role = "system" if m.role == "developer" else m.role
        if role == "tool" and not m.tool_call_id:
            raise InvalidRequest(f"messages[{i}]: a tool message needs tool_call_id",
                                 param=f"messages.{i}.tool_call_id")
        calls = tuple(
            ToolCall(c.id, c.function.name, _checked_arguments(c.function.arguments, i))
            for c in m.tool_calls or ())
        out.append(Message(role, _text_of(m.content, i), name=m.name,
                           tool_call_id=m.tool_call_id, tool_calls=calls,
                           reasoning=m.reasoning_content))
    return out


def _checked_arguments(arguments: str, index: int) -> str:
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"messages[{index}]: tool call arguments must be a JSON object in a string",
            param=f"messages.{index}.tool_calls")
    return arguments or "{}"


def _stops(stop: s.Stop) -> tuple[str, ...]:
    if stop is None:
        return ()
    stops = (stop,) if isinstance(stop, str) else tuple(stop)
    return tuple(x for x in stops if x)


def _max_tokens(requested: int | None, limits: Limits, param: str) -> int:
    if requested is None:
        return limits.max_tokens
    if requested > limits.max_tokens:
        raise InvalidRequest(
            f"{param} is {requested} but this server allows at most {limits.max_tokens}; "
            f"ask for fewer tokens", param=param)
    return requested


def _refuse_unsupported(req: s.ChatCompletionRequest | s.CompletionRequest) -> None:
    if req.n is not None and req.n > 1:
        raise InvalidRequest("n > 1 is not supported; send one request per answer", param="n")
    if isinstance(req, s.ChatCompletionRequest):
        if req.top_logprobs is not None and not req.logprobs:
            raise InvalidRequest("top_logprobs needs logprobs: true", param="top_logprobs")
        if forced_tools(req) and req.response_format is not None \
                and req.response_format.type != "text":
            raise InvalidRequest("a forced tool_choice cannot be combined with a JSON "
                                 "response_format", param="tool_choice")
    if isinstance(req, s.CompletionRequest):
        if req.echo:
            raise InvalidRequest("echo is not supported", param="echo")
        if req.best_of is not None and req.best_of > 1:
            raise InvalidRequest("best_of > 1 is not supported", param="best_of")


def _json_schema(fmt: s.ResponseFormat | None) -> str | None:
    if fmt is None or fmt.type == "text":
        return None
    if fmt.type == "json_object":
        return json.dumps({"type": "object"})
    if fmt.json_schema is None or fmt.json_schema.schema_ is None:
        raise InvalidRequest("response_format json_schema needs json_schema.schema",
                             param="response_format")
    return json.dumps(fmt.json_schema.schema_)


def sampling_params(req: s.ChatCompletionRequest | s.CompletionRequest,
                    limits: Limits) -> GenerationParams:
    """Generation parameters for a request, with OpenAI's defaults and our limits."""
    _refuse_unsupported(req)
    if isinstance(req, s.ChatCompletionRequest):
        wanted = req.max_completion_tokens or req.max_tokens
        param = "max_completion_tokens" if req.max_completion_tokens else "max_tokens"
        forced = forced_tools(req)
        schema = forced_call_schema(forced) if forced else _json_schema(req.response_format)
        logprobs = (req.top_logprobs or 0) if req.logprobs else None
    else:
        wanted, param, schema, logprobs = req.max_tokens, "max_tokens", None, req.logprobs
    return GenerationParams(
        max_tokens=_max_tokens(wanted, limits, param),
        temperature=1.0 if req.temperature is None else req.temperature,
        top_p=1.0 if req.top_p is None else req.top_p,
        presence_penalty=req.presence_penalty or 0.0,
        frequency_penalty=req.frequency_penalty or 0.0,
        stop=_stops(req.stop),
        seed=req.seed,
        json_schema=schema,
        logprobs=logprobs,
        timeout_s=limits.timeout_s,
    )


# Template variables render_chat sets itself; a request may not replace them.
RESERVED_TEMPLATE_VARIABLES = frozenset({"messages", "tools", "add_generation_prompt",
                                         "bos_token", "eos_token"})
# OpenAI's reasoning_effort as the templates' switch: "none" and "minimal" turn thinking
# off (GLM and Qwen-style templates have no partial setting); the rest leave it on.
THINKING_BY_EFFORT = {"none": False, "minimal": False, "low": True, "medium": True,
                      "high": True}


def template_kwargs(req: s.ChatCompletionRequest) -> dict[str, Any] | None:
    """Variables for the chat template: ``chat_template_kwargs`` plus ``reasoning_effort``."""
    kwargs = dict(req.chat_template_kwargs or {})
    reserved = sorted(RESERVED_TEMPLATE_VARIABLES & kwargs.keys())
    if reserved:
        raise InvalidRequest(f"chat_template_kwargs cannot set {', '.join(reserved)}; "
                             "send those as request fields", param="chat_template_kwargs")
    if req.reasoning_effort is not None:
        wanted = THINKING_BY_EFFORT[req.reasoning_effort]
        given = kwargs.setdefault("enable_thinking", wanted)
        if given != wanted:
            raise InvalidRequest(
                f"reasoning_effort '{req.reasoning_effort}' contradicts "
                f"chat_template_kwargs.enable_thinking={json.dumps(given)}; send one of them",
                param="reasoning_effort")
    return kwargs or None


def forced_tools(req: s.ChatCompletionRequest) -> list[dict[str, Any]] | None:
    """The tools one of which must be called (``required`` or a named choice), else None."""
    if req.tool_choice == "required" or isinstance(req.tool_choice, s.NamedToolChoice):
        return tools_for_engine(req)
    return None


def forced_call_schema(tools: Sequence[dict[str, Any]]) -> str:
    """A JSON schema for exactly one ``{"name", "arguments"}`` call of one of ``tools``.

    Sampling under its grammar makes a forced call happen whatever the model would
    rather say; the answer is then a bare JSON call, which the tool-call parser reads.
    """
    options = []
    for tool in tools:
        function = tool["function"]
        options.append({
            "type": "object",
            "properties": {"name": {"const": function["name"]},
                           "arguments": function.get("parameters") or {"type": "object"}},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        })
    return json.dumps(options[0] if len(options) == 1 else {"anyOf": options})


def tools_for_engine(req: s.ChatCompletionRequest) -> list[dict[str, Any]] | None:
    """The tools to render into the prompt (a named ``tool_choice`` offers only that one)."""
    if not req.tools or req.tool_choice == "none":
        if req.tool_choice == "required" or isinstance(req.tool_choice, s.NamedToolChoice):
            raise InvalidRequest("tool_choice forces a tool call but no tools were given",
                                 param="tool_choice")
        return None
    tools = [t.model_dump(exclude_none=True) for t in req.tools]
    if isinstance(req.tool_choice, s.NamedToolChoice):
        name = req.tool_choice.function.name
        tools = [t for t in tools if t["function"]["name"] == name]
        if not tools:
            raise InvalidRequest(f"tool_choice names '{name}', which is not in tools",
                                 param="tool_choice")
    return tools


def tool_names(tools: Sequence[dict[str, Any]] | None) -> dict[str, Any]:
    """The offered functions by name, each with its parameters schema (None if absent)."""
    return {t["function"]["name"]: t["function"].get("parameters") for t in tools or ()}


def completion_prompt(prompt: str | list[str] | list[int] | list[list[int]]
                      ) -> str | list[int]:
    """The one prompt of a completion request: text, or token ids to detokenize."""
    if isinstance(prompt, str):
        return prompt
    if len(prompt) == 0:
        raise InvalidRequest("prompt is empty", param="prompt")
    if all(isinstance(p, int) for p in prompt):
        return [int(p) for p in prompt]  # type: ignore[arg-type]
    if len(prompt) > 1:
        raise InvalidRequest("only one prompt per request is supported", param="prompt")
    only = prompt[0]
    return only if isinstance(only, str) else [int(t) for t in only]  # type: ignore[union-attr]


def embedding_inputs(value: str | list[str] | list[int] | list[list[int]]
                     ) -> list[str | list[int]]:
    """Each input to embed: a text, or token ids to detokenize first."""
    if isinstance(value, str):
        return [value]
    if len(value) == 0:
        raise InvalidRequest("input is empty", param="input")
    if all(isinstance(v, int) for v in value):
        return [[int(v) for v in value]]  # type: ignore[arg-type]
    return [v if isinstance(v, str) else [int(t) for t in v] for v in value]  # type: ignore[union-attr]


def rerank_texts(documents: Sequence[str | s.RerankDocument]) -> list[str]:
    """The texts to rank, refusing an empty or oversized list with the field named."""
    if not documents:
        raise InvalidRequest("documents is empty; send at least one document to rank",
                             param="documents")
    if len(documents) > MAX_RERANK_DOCUMENTS:
        raise InvalidRequest(f"documents has {len(documents)} items but at most "
                             f"{MAX_RERANK_DOCUMENTS} can be ranked in one request; "
                             "split them or pre-filter", param="documents")
    return [d if isinstance(d, str) else d.text for d in documents]


def check_reranker(model: str, kind: str, pooling: int | None) -> None:
    """Refuse a model that is not a cross-encoder reranker before it is loaded for nothing."""
    if kind == "reranker" and pooling in (None, 4):
        return
    name = POOLING_NAMES.get(pooling, str(pooling)) if pooling is not None else "none"
    raise InvalidRequest(f"model {model} is not a reranking model ({kind}, pooling type "
                         f"{name}); use a bge-reranker GGUF such as bge-reranker-v2-m3",
                         param="model")


def relevance(score: float) -> float:
    """A reranker's raw logit as a 0-1 relevance (the sigmoid Jina and Cohere report)."""
    if score >= 0:
        return 1.0 / (1.0 + math.exp(-score))
    small = math.exp(score)  # this form cannot overflow for very negative logits
    return small / (1.0 + small)


def rerank_response(*, request_id: str, model: str, texts: Sequence[str],
                    scores: Sequence[float], top_n: int | None, return_documents: bool,
                    tokens: int) -> s.RerankResponse:
    """Results best first (ties keep request order), cut to ``top_n``."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])[:top_n]
    return s.RerankResponse(
        id=request_id, model=model,
        usage=s.RerankUsage(prompt_tokens=tokens, total_tokens=tokens),
        results=[s.RerankResult(index=i, relevance_score=relevance(scores[i]),
                                document=s.RerankDocumentOut(text=texts[i])
                                if return_documents else None)
                 for i in order])


# ---------------------------------------------------------------- engine → responses


def finish_reason(chunk: Chunk, calls: Sequence[ToolCall] = ()) -> str:
    """OpenAI's finish_reason for the engine's (``timeout`` reads as ``length``)."""
    if calls:
        return "tool_calls"
    return "stop" if chunk.finish_reason in ("stop", "cancelled") else "length"


def usage_out(usage: Usage | None) -> s.UsageOut:
    """Usage in OpenAI's shape."""
    u = usage or Usage()
    return s.UsageOut(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
                      total_tokens=u.total_tokens,
                      prompt_tokens_details=s.PromptTokensDetails(cached_tokens=u.cached_tokens))


def tool_calls_out(calls: Sequence[ToolCall]) -> list[s.ToolCallOut] | None:
    """Tool calls in OpenAI's shape (None when there are none)."""
    if not calls:
        return None
    return [s.ToolCallOut(id=c.id, function=s.FunctionCallOut(name=c.name, arguments=c.arguments))
            for c in calls]


def split_answer(text: str, tools: Sequence[dict[str, Any]] | None) -> ParsedAnswer:
    """The answer's words and tool calls (no parsing when no tools were offered)."""
    if not tools:
        return ParsedAnswer(text, ())
    return parse_tool_calls(text, tool_names(tools))


def _bytes(token: str) -> list[int]:
    return list(token.encode("utf-8"))


def chat_logprobs(logprobs: Sequence[TokenLogprob] | None) -> s.ChatLogprobs | None:
    """Chat ``logprobs`` for the sampled tokens (None when they were not asked for)."""
    if logprobs is None:
        return None
    return s.ChatLogprobs(content=[
        s.TokenLogprobOut(token=lp.token, logprob=lp.logprob, bytes=_bytes(lp.token),
                          top_logprobs=[s.TopLogprob(token=t, logprob=v, bytes=_bytes(t))
                                        for t, v in lp.top])
        for lp in logprobs])


def completion_logprobs(logprobs: Sequence[TokenLogprob] | None, offset: int = 0
                        ) -> s.CompletionLogprobs | None:
    """Legacy completion ``logprobs``; ``offset`` is where these tokens start in the text."""
    if logprobs is None:
        return None
    offsets = []
    for lp in logprobs:
        offsets.append(offset)
        offset += len(lp.token)
    return s.CompletionLogprobs(
        tokens=[lp.token for lp in logprobs],
        token_logprobs=[lp.logprob for lp in logprobs],
        top_logprobs=[dict(lp.top) for lp in logprobs],
        text_offset=offsets)


def chat_completion(*, request_id: str, model: str, created: int, text: str, reasoning: str,
                    final: Chunk, tools: Sequence[dict[str, Any]] | None,
                    logprobs: Sequence[TokenLogprob] | None = None) -> s.ChatCompletion:
    """A whole chat answer (``logprobs`` None: not asked for)."""
    answer = split_answer(text, tools)
    message = s.ChatMessageOut(content=answer.content if answer.content or not answer.tool_calls
                               else None,
                               reasoning_content=reasoning or None,
                               tool_calls=tool_calls_out(answer.tool_calls))
    return s.ChatCompletion(
        id=request_id, created=created, model=model, usage=usage_out(final.usage),
        choices=[s.ChatChoice(message=message, logprobs=chat_logprobs(logprobs),
                              finish_reason=finish_reason(final, answer.tool_calls))])


def text_completion(*, request_id: str, model: str, created: int, text: str,
                    final: Chunk, logprobs: Sequence[TokenLogprob] | None = None
                    ) -> s.Completion:
    """A whole text completion (``logprobs`` None: not asked for)."""
    return s.Completion(id=request_id, created=created, model=model,
                        usage=usage_out(final.usage),
                        choices=[s.CompletionChoice(text=text, finish_reason=finish_reason(final),
                                                    logprobs=completion_logprobs(logprobs))])


def chat_delta(*, request_id: str, model: str, created: int, delta: dict[str, Any],
               finish: str | None = None, usage: s.UsageOut | None = None,
               with_usage_field: bool = False,
               logprobs: Sequence[TokenLogprob] | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` event body."""
    lp = chat_logprobs(logprobs)
    body: dict[str, Any] = {
        "id": request_id, "object": "chat.completion.chunk", "created": created,
        "model": model, "system_fingerprint": None,
        "choices": [] if usage is not None else
        [{"index": 0, "delta": delta, "logprobs": lp.model_dump() if lp else None,
          "finish_reason": finish}],
    }
    if usage is not None or with_usage_field:
        body["usage"] = usage.model_dump() if usage is not None else None
    return body


def chunk_delta(chunk: Chunk) -> dict[str, Any]:
    """The delta of a streamed engine chunk (content and/or reasoning)."""
    delta: dict[str, Any] = {}
    if chunk.text:
        delta["content"] = chunk.text
    if chunk.reasoning:
        delta["reasoning_content"] = chunk.reasoning
    return delta


def tool_call_deltas(calls: Sequence[ToolCall]) -> dict[str, Any]:
    """A delta carrying whole tool calls (sent once, when the answer is complete)."""
    return {"tool_calls": [
        {"index": i, "id": c.id, "type": "function",
         "function": {"name": c.name, "arguments": c.arguments}}
        for i, c in enumerate(calls)]}


def completion_delta(*, request_id: str, model: str, created: int, text: str,
                     finish: str | None = None, usage: s.UsageOut | None = None,
                     logprobs: s.CompletionLogprobs | None = None) -> dict[str, Any]:
    """One streamed ``text_completion`` event body."""
    body: dict[str, Any] = {
        "id": request_id, "object": "text_completion", "created": created, "model": model,
        "choices": [] if usage is not None else
        [{"index": 0, "text": text, "logprobs": logprobs.model_dump() if logprobs else None,
          "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage.model_dump()
    return body


def sse(body: dict[str, Any]) -> bytes:
    """One server-sent event carrying ``body`` as JSON."""
    return b"data: " + json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\n\n"


def encode_embedding(vector: Sequence[float], encoding: str) -> list[float] | str:
    """A vector as floats, or as base64 of little-endian float32 (what the client decodes)."""
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return list(vector)


def error_body(message: str, *, type_: str, code: str | None, param: str | None = None
               ) -> dict[str, Any]:
    """The OpenAI error envelope."""
    return s.ErrorBody(error=s.ErrorDetail(message=message, type=type_, param=param,
                                           code=code)).model_dump()


def stream_error(message: str, *, type_: str, code: str | None) -> bytes:
    """The end of a chat/completions stream that failed mid-way: the error, then ``[DONE]``.

    As OpenAI and vLLM send it: a ``data:`` event whose body is the error envelope (the
    ``openai`` client raises an ``APIError`` with its message); ``[DONE]`` after it, as
    vLLM sends, so clients that read until ``[DONE]`` end cleanly too.
    """
    return sse(error_body(message, type_=type_, code=code)) + DONE
