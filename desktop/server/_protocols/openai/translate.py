"""Pure translation of OpenAI requests into the engine's plain values, with their checks.

No I/O and no state: a chat request becomes one ``ChatCall`` (``chat_call``: messages,
sampling, typed tool specs, template variables, a forced call), completions their
prompts and inputs; a bad field raises InvalidRequest naming it.
The request bodies are ``schemas``; the other direction (engine chunks → response bodies
and SSE) is ``events`` and ``sse``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import ValidationError

from desktop.base.errors import InvalidRequest
from desktop.engine import (
    DEFAULT_LIMITS,
    ChatCall,
    GenerationParams,
    Image,
    ImageLimits,
    Message,
    ToolCall,
    ToolSpec,
)
from desktop.server import _image_parts as images
from desktop.server import _leniency as leniency
from desktop.server._leniency import capped_max_tokens
from desktop.server._protocols.openai import schemas
from desktop.server._request_parts import Limits, TemplateKwargs, forced_call_schema

MAX_RERANK_DOCUMENTS = 1000  # one request's worth; a reranker orders candidates, not corpora
POOLING_NAMES = {0: "none", 1: "mean", 2: "cls", 3: "last", 4: "rank"}  # llama.cpp's enum


# ---------------------------------------------------------------- requests → engine


def _text_of(content: str | list[schemas.ContentPart] | None, index: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    parts = []
    for part in content:
        if part.type != "text" or part.text is None:
            hint = " (image parts go in user messages)" if part.type == "image_url" else ""
            raise InvalidRequest(
                f"messages[{index}]: content part type '{part.type}' is not supported; "
                f"send text or image_url parts{hint}",
                param=f"messages.{index}.content",
            )
        parts.append(part.text)
    return "".join(parts)


def _content_of(
    message: schemas.ChatMessageIn, index: int, limits: ImageLimits
) -> tuple[str, tuple[Image, ...]]:
    """A message's text and pictures: ``image_url`` parts of a user message become
    images, each marked in the text where its part stood."""
    content = message.content
    if (
        message.role != "user"
        or not isinstance(content, list)
        or not any(p.type == "image_url" for p in content)
    ):
        return _text_of(content, index), ()
    pieces: list[str | Image] = []
    for j, part in enumerate(content):
        where, param = f"messages[{index}].content[{j}]", f"messages.{index}.content.{j}"
        if part.type == "image_url":
            given = part.image_url
            url = given.url if isinstance(given, schemas.ImageURL) else given
            pieces.append(
                images.image_from_url(url, where=where, param=param + ".image_url", limits=limits)
            )
        else:
            pieces.append(_text_of([part], index))
    return images.joined(pieces)


def to_messages(
    messages: Sequence[schemas.ChatMessageIn], *, limits: ImageLimits = DEFAULT_LIMITS
) -> list[Message]:
    """The conversation as engine messages (``developer`` is treated as ``system``);
    pictures over ``limits`` are a 400."""
    out: list[Message] = []
    for i, m in enumerate(messages):
        role = "system" if m.role == "developer" else m.role
        if role == "tool" and not m.tool_call_id:
            raise InvalidRequest(
                f"messages[{i}]: a tool message needs tool_call_id",
                param=f"messages.{i}.tool_call_id",
            )
        calls = tuple(
            ToolCall(c.id, c.function.name, _checked_arguments(c.function.arguments, i))
            for c in m.tool_calls or ()
        )
        text, pictures = _content_of(m, i, limits)
        out.append(
            Message(
                role,
                text,
                name=m.name,
                tool_call_id=m.tool_call_id,
                tool_calls=calls,
                reasoning=m.reasoning_content,
                images=pictures,
            )
        )
    return out


def _checked_arguments(arguments: str, index: int) -> str:
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"messages[{index}]: tool call arguments must be a JSON object in a string",
            param=f"messages.{index}.tool_calls",
        )
    return arguments or "{}"


def _stops(stop: schemas.Stop) -> tuple[str, ...]:
    if stop is None:
        return ()
    stops = (stop,) if isinstance(stop, str) else tuple(stop)
    return tuple(x for x in stops if x)


def _refuse_unsupported(req: schemas.ChatCompletionRequest | schemas.CompletionRequest) -> None:
    if req.n is not None and req.n > 1:
        raise InvalidRequest("n > 1 is not supported; send one request per answer", param="n")
    if isinstance(req, schemas.ChatCompletionRequest):
        if req.top_logprobs is not None and not req.logprobs:
            raise InvalidRequest("top_logprobs needs logprobs: true", param="top_logprobs")
        if (
            forced_tools(req)
            and req.response_format is not None
            and req.response_format.type != "text"
        ):
            raise InvalidRequest(
                "a forced tool_choice cannot be combined with a JSON response_format",
                param="tool_choice",
            )
    if isinstance(req, schemas.CompletionRequest):
        if req.echo:
            raise InvalidRequest("echo is not supported", param="echo")
        if req.best_of is not None and req.best_of > 1:
            raise InvalidRequest("best_of > 1 is not supported", param="best_of")


def _json_schema(fmt: schemas.ResponseFormat | None) -> str | None:
    if fmt is None or fmt.type == "text":
        return None
    if fmt.type == "json_object":
        return json.dumps({"type": "object"})
    if fmt.json_schema is None or fmt.json_schema.schema_ is None:
        raise InvalidRequest(
            "response_format json_schema needs json_schema.schema", param="response_format"
        )
    return json.dumps(fmt.json_schema.schema_)


def sampling_params(
    req: schemas.ChatCompletionRequest | schemas.CompletionRequest, limits: Limits
) -> GenerationParams:
    """Generation parameters for a request, with OpenAI's defaults and our limits."""
    _refuse_unsupported(req)
    if isinstance(req, schemas.ChatCompletionRequest):
        wanted = req.max_completion_tokens or req.max_tokens
        forced = forced_tools(req)
        schema = forced_call_schema(forced) if forced else _json_schema(req.response_format)
        logprobs = (req.top_logprobs or 0) if req.logprobs else None
    else:
        wanted, schema, logprobs = req.max_tokens, None, req.logprobs
    return GenerationParams(
        # Above the server's limit: lowered, not refused (see leniency.capped_max_tokens).
        max_tokens=capped_max_tokens(wanted, limits.max_tokens),
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
RESERVED_TEMPLATE_VARIABLES = frozenset(
    {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"}
)
# OpenAI's reasoning_effort as the templates' switch: "none" and "minimal" turn thinking
# off (GLM and Qwen-style templates have no partial setting); the rest leave it on.
THINKING_BY_EFFORT = {"none": False, "minimal": False, "low": True, "medium": True, "high": True}


def template_kwargs(req: schemas.ChatCompletionRequest) -> TemplateKwargs | None:
    """Variables for the chat template: ``chat_template_kwargs`` plus ``reasoning_effort``."""
    kwargs = dict(req.chat_template_kwargs or {})
    reserved = sorted(RESERVED_TEMPLATE_VARIABLES & kwargs.keys())
    if reserved:
        raise InvalidRequest(
            f"chat_template_kwargs cannot set {', '.join(reserved)}; send those as request fields",
            param="chat_template_kwargs",
        )
    if req.reasoning_effort is not None:
        wanted = THINKING_BY_EFFORT[req.reasoning_effort]
        given = kwargs.setdefault("enable_thinking", wanted)
        if given != wanted:
            raise InvalidRequest(
                f"reasoning_effort '{req.reasoning_effort}' contradicts "
                f"chat_template_kwargs.enable_thinking={json.dumps(given)}; send one of them",
                param="reasoning_effort",
            )
    return kwargs or None


def forced_tools(req: schemas.ChatCompletionRequest) -> tuple[ToolSpec, ...] | None:
    """The tools one of which must be called (``required`` or a named choice), else None."""
    if req.tool_choice == "required" or isinstance(req.tool_choice, schemas.NamedToolChoice):
        return tools_for_engine(req)
    return None


def left_out_tools(req: schemas.ChatCompletionRequest) -> list[leniency.Hosted]:
    """The tools this server does not run (every type but ``function``), left out."""
    return leniency.split_tools(req.tools, ("function", None))[1]


def _function_tools(req: schemas.ChatCompletionRequest) -> list[ToolSpec]:
    tools = []
    for i, tool in leniency.split_tools(req.tools, ("function", None))[0]:
        try:
            checked = schemas.ToolDef.model_validate(tool)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(["tools", str(i), *(str(p) for p in first.get("loc", ()))])
            raise InvalidRequest(f"'{where}': {first['msg']}", param=where) from None
        tools.append(ToolSpec.from_openai(checked.model_dump(exclude_none=True)))
    return tools


def tools_for_engine(req: schemas.ChatCompletionRequest) -> tuple[ToolSpec, ...] | None:
    """The tools to render into the prompt (a named ``tool_choice`` offers only that one).

    Tools of other types than ``function`` are left out (``left_out_tools``).
    """
    tools = _function_tools(req)
    if isinstance(req.tool_choice, schemas.NamedToolChoice):
        name = req.tool_choice.function.name
        if not any(t.name == name for t in tools):
            leniency.refuse_forced(name, left_out_tools(req))
    if not tools or req.tool_choice == "none":
        if req.tool_choice == "required" or isinstance(req.tool_choice, schemas.NamedToolChoice):
            leniency.refuse_nothing_to_force(left_out_tools(req))
        return None
    if isinstance(req.tool_choice, schemas.NamedToolChoice):
        name = req.tool_choice.function.name
        tools = [t for t in tools if t.name == name]
        if not tools:
            raise InvalidRequest(
                f"tool_choice names '{name}', which is not in tools", param="tool_choice"
            )
    return tuple(tools)


def chat_call(
    req: schemas.ChatCompletionRequest, messages: Sequence[Message], limits: Limits
) -> ChatCall:
    """The engine's call for a chat completion (``messages``: its ``to_messages``): the
    sampling, the function tools, the template switches and whether a call is forced."""
    params = sampling_params(req, limits)
    tools = tools_for_engine(req)
    return ChatCall.of(
        messages, params, tools, template_kwargs(req), forced=forced_tools(req) is not None
    )


def completion_prompt(prompt: str | list[str] | list[int] | list[list[int]]) -> str | list[int]:
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


def embedding_inputs(value: str | list[str] | list[int] | list[list[int]]) -> list[str | list[int]]:
    """Each input to embed: a text, or token ids to detokenize first."""
    if isinstance(value, str):
        return [value]
    if len(value) == 0:
        raise InvalidRequest("input is empty", param="input")
    if all(isinstance(v, int) for v in value):
        return [[int(v) for v in value]]  # type: ignore[arg-type]
    return [v if isinstance(v, str) else [int(t) for t in v] for v in value]  # type: ignore[union-attr]


def rerank_texts(documents: Sequence[str | schemas.RerankDocument]) -> list[str]:
    """The texts to rank, refusing an empty or oversized list with the field named."""
    if not documents:
        raise InvalidRequest(
            "documents is empty; send at least one document to rank", param="documents"
        )
    if len(documents) > MAX_RERANK_DOCUMENTS:
        raise InvalidRequest(
            f"documents has {len(documents)} items but at most "
            f"{MAX_RERANK_DOCUMENTS} can be ranked in one request; "
            "split them or pre-filter",
            param="documents",
        )
    return [d if isinstance(d, str) else d.text for d in documents]


def check_reranker(model: str, kind: str, pooling: int | None) -> None:
    """Refuse a model that is not a cross-encoder reranker before it is loaded for nothing."""
    if kind == "reranker" and pooling in (None, 4):
        return
    name = POOLING_NAMES.get(pooling, str(pooling)) if pooling is not None else "none"
    raise InvalidRequest(
        f"model {model} is not a reranking model ({kind}, pooling type "
        f"{name}); use a bge-reranker GGUF such as bge-reranker-v2-m3",
        param="model",
    )
