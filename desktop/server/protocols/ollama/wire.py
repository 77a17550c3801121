"""Pure translation between Ollama's ``/api/*`` and the engine's plain values.

Chat and generate requests become the same ``ChatCall`` the OpenAI routes make
(``chat_call``, ``generate_call``: ``options`` mapped onto ``GenerationParams``,
``think`` onto the template's thinking switch); answers become Ollama's JSON objects,
one per NDJSON line when streamed. Durations are nanoseconds, as Ollama reports them.
No I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from desktop.base.errors import InvalidRequest
from desktop.engine import (
    DEFAULT_LIMITS,
    MEDIA_MARKER,
    ChatCall,
    Delta,
    GenerationParams,
    Image,
    ImageLimits,
    Message,
    ToolCall,
    ToolSpec,
)
from desktop.server import image_parts as images
from desktop.server import request_parts
from desktop.server.answer import finish_reason
from desktop.server.leniency import capped_max_tokens
from desktop.server.request_parts import (
    arguments_object,
    function_tool,
    thinking_kwargs,
)

MAPPED_OPTIONS = frozenset(
    {
        "num_predict",
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "stop",
        "min_p",
        "repeat_penalty",
        "presence_penalty",
        "frequency_penalty",
    }
)
# Load-time settings: EdgeDesk fits context and GPU layers to the machine when it loads a
# model, so these are accepted and left to that plan (num_ctx larger than the loaded
# context is answered by a clear 400 when the prompt does not fit).
LOAD_OPTIONS = frozenset(
    {
        "num_ctx",
        "num_batch",
        "num_gpu",
        "main_gpu",
        "num_thread",
        "use_mmap",
        "use_mlock",
        "numa",
        "low_vram",
        "vocab_only",
        "num_keep",
        "penalize_newline",
        "f16_kv",
        "logits_all",
        "repeat_last_n",
    }
)
# Accepted only at the value that turns them off (clients send the defaults).
NEUTRAL_OPTIONS = {"mirostat": 0, "tfs_z": 1, "typical_p": 1}
_DURATION = re.compile(r"^(-?\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)?$")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Generation(_Lenient):
    model: str = Field(min_length=1)
    format: str | dict[str, Any] | None = None
    options: dict[str, Any] | None = None
    stream: bool = True
    keep_alive: str | float | None = None
    think: bool | str | None = None


class ChatRequest(_Generation):
    """``POST /api/chat``."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None


class GenerateRequest(_Generation):
    """``POST /api/generate``."""

    prompt: str = ""
    suffix: str | None = None
    system: str | None = None
    template: str | None = None
    context: list[int] | None = None
    raw: bool = False
    images: list[str] | None = None

    @field_validator("suffix")
    @classmethod
    def _no_empty_suffix(cls, value: str | None) -> str | None:
        # Ollama fills in the middle only for a non-empty suffix: a client that sends the
        # zero value (a Go struct without omitempty) asks for a plain completion.
        return value or None


class EmbedRequest(_Lenient):
    """``POST /api/embed``."""

    model: str = Field(min_length=1)
    input: str | list[str]
    truncate: bool = True
    options: dict[str, Any] | None = None
    keep_alive: str | float | None = None
    dimensions: int | None = None


class EmbeddingsRequest(_Lenient):
    """``POST /api/embeddings`` (the older, one-text form)."""

    model: str = Field(min_length=1)
    prompt: str = ""
    options: dict[str, Any] | None = None
    keep_alive: str | float | None = None


class ShowRequest(_Lenient):
    """``POST /api/show`` (``name`` is the older spelling of ``model``)."""

    model: str | None = None
    name: str | None = None
    verbose: bool | None = None


# ---------------------------------------------------------------- request → engine


def model_name(name: str, known: Sequence[str] | None = None) -> str:
    """A model id from an Ollama name: ``:latest`` (Ollama's default tag) is dropped."""
    if known is not None and name in known:
        return name
    return name.removesuffix(":latest")


def keep_alive_s(value: str | float | None) -> float | None:
    """``keep_alive`` in seconds (a number, or a duration such as ``5m``); None: default."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(value.strip())
    if match is None:
        raise InvalidRequest(
            f"keep_alive '{value}' is not a duration such as '5m', '1h', '0' or -1",
            param="keep_alive",
        )
    return float(match.group(1)) * _UNIT_S[match.group(2) or "s"]


_INT64 = 2**63  # integer options lie in [-2**63, 2**63)


def _number(options: dict[str, Any], key: str, *, integer: bool = False) -> float | None:
    value = options.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (integer and not float(value).is_integer())
    ):
        raise InvalidRequest(
            f"options.{key} must be a {'whole ' if integer else ''}number", param=f"options.{key}"
        )
    if integer and not -_INT64 <= value < _INT64:
        # The engine's wire and llama.cpp take 64-bit integers at most (Ollama's Go int).
        raise InvalidRequest(
            f"options.{key} is {value:g}, out of range (a 64-bit integer)", param=f"options.{key}"
        )
    return float(value)


def _stops(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise InvalidRequest(
            "options.stop must be a string or a list of strings", param="options.stop"
        )
    return tuple(s for s in stops if s)


def _check_options(options: dict[str, Any]) -> None:
    for key, value in options.items():
        if key in MAPPED_OPTIONS or key in LOAD_OPTIONS:
            continue
        if key in NEUTRAL_OPTIONS and value in (None, NEUTRAL_OPTIONS[key]):
            continue
        raise InvalidRequest(
            f"options.{key} is not supported here; supported: {', '.join(sorted(MAPPED_OPTIONS))}",
            param=f"options.{key}",
        )


def _schema(fmt: str | dict[str, Any] | None) -> str | None:
    if fmt is None or fmt == "":
        return None
    if fmt == "json":
        return json.dumps({"type": "object"})
    if isinstance(fmt, dict):
        return json.dumps(fmt)
    raise InvalidRequest("format must be 'json' or a JSON schema object", param="format")


def generation_params(req: _Generation, limits: request_parts.Limits) -> GenerationParams:
    """Sampling from ``options`` with Ollama's defaults (0.8 / top_p 0.9 / top_k 40)."""
    options = req.options or {}
    _check_options(options)
    predict = _number(options, "num_predict", integer=True)
    wanted = None if predict is None or predict < 0 else max(1, int(predict))
    temperature = _number(options, "temperature")
    top_p = _number(options, "top_p")
    top_k = _number(options, "top_k", integer=True)
    seed = _number(options, "seed", integer=True)
    params = GenerationParams(
        max_tokens=capped_max_tokens(wanted, limits.max_tokens),
        temperature=0.8 if temperature is None else max(0.0, temperature),
        top_p=0.9 if top_p is None or not 0 < top_p <= 1 else top_p,
        top_k=40 if top_k is None else max(0, int(top_k)),
        seed=None if seed is None or seed < 0 else int(seed),
        stop=_stops(options.get("stop")),
        json_schema=_schema(req.format),
        timeout_s=limits.timeout_s,
    )
    extra = {
        key: value
        for key in ("min_p", "repeat_penalty", "presence_penalty", "frequency_penalty")
        if (value := _number(options, key)) is not None
    }
    return replace(params, **extra) if extra else params  # type: ignore[arg-type]


def template_kwargs(think: bool | str | None) -> dict[str, Any] | None:
    """``think`` as the thinking switch (effort words such as 'high' turn it on)."""
    if think is None:
        return None
    if isinstance(think, str):
        return thinking_kwargs(think.lower() not in ("false", "none", ""))
    return thinking_kwargs(think)


def to_messages(
    messages: Sequence[dict[str, Any]], *, limits: ImageLimits = DEFAULT_LIMITS
) -> list[Message]:
    """Ollama chat messages as engine messages (tool results matched to their calls;
    pictures over ``limits`` are a 400)."""
    out: list[Message] = []
    pending: list[ToolCall] = []  # calls still waiting for their result, oldest first
    for i, message in enumerate(messages):
        where, role = f"messages[{i}]", message.get("role")
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise InvalidRequest(f"{where}.content must be a string", param=f"messages.{i}.content")
        attached = pictures(
            message.get("images"), f"{where}.images", f"messages.{i}.images", limits
        )
        if attached and role != "user":
            raise InvalidRequest(
                f"{where}: images go in user messages", param=f"messages.{i}.images"
            )
        if attached:
            out.append(Message("user", _marked(content, attached), images=attached))
        elif role in ("system", "user"):
            out.append(Message(role, content))
        elif role == "assistant":
            raw_calls = message.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise InvalidRequest(
                    f"{where}.tool_calls must be a list", param=f"messages.{i}.tool_calls"
                )
            calls = tuple(
                _call(c, f"{where}.tool_calls[{j}]", f"call_{i}_{j}")
                for j, c in enumerate(raw_calls)
            )
            pending += calls
            thinking = message.get("thinking")
            out.append(
                Message(
                    "assistant",
                    content,
                    tool_calls=calls,
                    reasoning=thinking if isinstance(thinking, str) else None,
                )
            )
        elif role == "tool":
            given = message.get("tool_name") or message.get("name")
            name = given if isinstance(given, str) else None
            match = next((c for c in pending if c.name == name), pending[0] if pending else None)
            if match is not None:
                pending.remove(match)
            out.append(
                Message(
                    "tool",
                    content,
                    tool_call_id=match.id if match else f"call_{i}",
                    name=match.name if match else name,
                )
            )
        else:
            raise InvalidRequest(
                f"{where}.role must be system, user, assistant or tool", param=f"messages.{i}.role"
            )
    return out


def pictures(
    value: object, where: str, param: str, limits: ImageLimits = DEFAULT_LIMITS
) -> tuple[Image, ...]:
    """Ollama's ``images``: a list of base64 pictures (none: an empty tuple)."""
    if value is None or value == []:
        return ()
    if not isinstance(value, list):
        raise InvalidRequest(f"{where} must be a list of base64 images", param=param)
    return tuple(
        images.image_from_base64(v, where=f"{where}[{j}]", param=f"{param}.{j}", limits=limits)
        for j, v in enumerate(value)
    )


def _marked(text: str, images: Sequence[Image]) -> str:
    """Ollama puts a message's pictures before its words: one marker each, then the text."""
    return "".join(MEDIA_MARKER for _ in images) + ("\n" + text if text else "")


def _call(value: object, where: str, call_id: str) -> ToolCall:
    function = value.get("function") if isinstance(value, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(function, dict) or not isinstance(name, str) or not name:
        raise InvalidRequest(
            f"{where} must be {{'function': {{'name', 'arguments'}}}}",
            param=where.replace("[", ".").replace("]", ""),
        )
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        arguments = arguments_object(arguments)
    if not isinstance(arguments, dict):
        raise InvalidRequest(f"{where}.function.arguments must be an object", param=where)
    return ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False))


def tools_for_engine(tools: Sequence[dict[str, Any]] | None) -> tuple[ToolSpec, ...] | None:
    """Ollama's function tools (in OpenAI's shape), checked, as the engine offers them."""
    out = []
    for i, tool in enumerate(tools or ()):
        function = tool.get("function")
        if tool.get("type", "function") != "function" or not isinstance(function, dict):
            raise InvalidRequest(
                f"tools[{i}] must be {{'type': 'function', 'function': …}}", param=f"tools.{i}"
            )
        out.append(
            function_tool(
                function.get("name"),
                function.get("description"),
                function.get("parameters"),
                f"tools[{i}].function",
            )
        )
    return tuple(out) or None


def chat_call(
    req: ChatRequest, messages: Sequence[Message], limits: request_parts.Limits
) -> ChatCall:
    """The engine's call for ``/api/chat`` (``messages``: its ``to_messages``): function
    tools, sampling from ``options``, ``think`` (Ollama forces no tool)."""
    tools = tools_for_engine(req.tools)
    params = generation_params(req, limits)
    return ChatCall.of(messages, params, tools, template_kwargs(req.think))


def generate_call(
    req: GenerateRequest, messages: Sequence[Message], params: GenerationParams
) -> ChatCall:
    """The engine's call for a templated ``/api/generate`` (``messages``: its
    ``generate_messages``, ``params`` its ``generation_params``): no tools."""
    return ChatCall.of(messages, params, None, template_kwargs(req.think))


def generate_messages(
    req: GenerateRequest, *, limits: ImageLimits = DEFAULT_LIMITS
) -> list[Message]:
    """A templated ``/api/generate`` prompt as a one-turn chat (``system`` first)."""
    out = [Message("system", req.system)] if req.system else []
    attached = pictures(req.images, "images", "images", limits)
    if attached:
        return [*out, Message("user", _marked(req.prompt, attached), images=attached)]
    return [*out, Message("user", req.prompt)]


def refuse_generate(req: GenerateRequest) -> None:
    """A 400 naming a generate field we cannot honour."""
    if req.template:
        raise InvalidRequest(
            "a custom template is not supported; the model's own chat "
            "template is used (or send raw: true with a formatted prompt)",
            param="template",
        )
    if req.context:
        raise InvalidRequest(
            "context (token ids of an earlier answer) is not supported; "
            "send the conversation to /api/chat",
            param="context",
        )
    if req.images and (req.raw or req.suffix is not None):
        raise InvalidRequest(
            "images need the model's chat template; send them without raw or suffix", param="images"
        )


# ---------------------------------------------------------------- engine → responses


def timestamp(now: float) -> str:
    """Ollama's ``created_at``: RFC 3339 UTC with nanosecond-style precision."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def done_reason(final: Delta) -> str:
    """``done_reason``: stop or length (a timeout reads as length)."""
    return "stop" if finish_reason(final) == "stop" else "length"


def stats(final: Delta) -> dict[str, int]:
    """Counts and durations (nanoseconds) of the final line."""
    usage, timings = final.usage, final.timings
    ns = 1_000_000_000

    def dur(seconds: float) -> int:
        return int(seconds * ns)

    prompt = timings.prompt_s if timings else 0.0
    generation = timings.generation_s if timings else 0.0
    load = timings.load_s if timings else 0.0
    queue = timings.queue_s if timings else 0.0
    return {
        "total_duration": dur(load + queue + prompt + generation),
        "load_duration": dur(load),
        "prompt_eval_count": usage.prompt_tokens if usage else 0,
        "prompt_eval_duration": dur(prompt),
        "eval_count": usage.completion_tokens if usage else 0,
        "eval_duration": dur(generation),
    }


def tool_calls_out(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """Tool calls in Ollama's shape (arguments as an object)."""
    return [
        {"function": {"index": n, "name": c.name, "arguments": arguments_object(c.arguments)}}
        for n, c in enumerate(calls)
    ]


def line(body: dict[str, Any]) -> bytes:
    """One NDJSON line."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\n"


def describe(model: str, info: dict[str, Any]) -> dict[str, Any]:
    """A model as ``/api/tags`` lists it (``info`` from the model directory)."""
    size = int(info.get("file_bytes") or 0)
    digest = hashlib.sha256(f"{model}\0{size}\0{info.get('modified', 0)}".encode()).hexdigest()
    arch = str(info.get("architecture") or "")
    return {
        "name": model,
        "model": model,
        "modified_at": timestamp(float(info.get("modified") or 0)),
        "size": size,
        "digest": digest,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": arch,
            "families": [arch] if arch else None,
            "parameter_size": _parameter_size(int(info.get("parameters") or 0)),
            "quantization_level": info.get("file_type") or "",
        },
    }


def _parameter_size(count: int) -> str:
    for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f}{unit}".replace(".0", "")
    return str(count)


def show(model: str, info: dict[str, Any]) -> dict[str, Any]:
    """``/api/show``: details, header facts as ``model_info`` and capabilities."""
    arch = str(info.get("architecture") or "")
    listed = describe(model, info)
    kind = info.get("kind", "chat")
    capabilities = (
        ["embedding"]
        if kind == "embedding"
        else (
            ["completion", "tools", "thinking"]
            if info.get("reasoning")
            else ["completion", "tools"]
        )
        if kind == "chat"
        else []
    )
    if info.get("vision"):
        capabilities.insert(1, "vision")  # Ollama's order: completion, vision, tools…
    model_info = {
        "general.architecture": arch,
        "general.parameter_count": int(info.get("parameters") or 0),
    }
    for key in ("context_length", "embedding_length", "block_count"):
        if info.get(key):
            model_info[f"{arch}.{key}"] = int(info[key])
    return {
        "modelfile": f"# served by EdgeDesk from a GGUF file\nFROM {model}\n",
        "parameters": "",
        "template": info.get("chat_template") or "",
        "details": listed["details"],
        "model_info": model_info,
        "capabilities": capabilities,
        "modified_at": listed["modified_at"],
    }
