"""Pure translation of Ollama's ``/api/*`` requests (``requests``) into the engine's
plain values.

Chat and generate requests become the same ``ChatCall`` the OpenAI routes make
(``chat_call``, ``generate_call``: ``options`` mapped onto ``GenerationParams``,
``think`` onto the template's thinking switch); answers are ``replies``. No I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from desktop.base.errors import InvalidRequest
from desktop.engine import (
    DEFAULT_LIMITS,
    MEDIA_MARKER,
    ChatCall,
    GenerationParams,
    Image,
    ImageLimits,
    Message,
    ToolCall,
    ToolSpec,
)
from desktop.server import _image_parts as images
from desktop.server import _request_parts as request_parts
from desktop.server._leniency import capped_max_tokens
from desktop.server._protocols.ollama.requests import (
    ChatMessage,
    ChatRequest,
    GenerateRequest,
    Generation,
    Tool,
    ToolCallIn,
)
from desktop.server._request_parts import (
    TemplateKwargs,
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


def _number(options: Mapping[str, object], key: str, *, integer: bool = False) -> float | None:
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


def _check_options(options: Mapping[str, object]) -> None:
    for key, value in options.items():
        if key in MAPPED_OPTIONS or key in LOAD_OPTIONS:
            continue
        if key in NEUTRAL_OPTIONS and value in (None, NEUTRAL_OPTIONS[key]):
            continue
        raise InvalidRequest(
            f"options.{key} is not supported here; supported: {', '.join(sorted(MAPPED_OPTIONS))}",
            param=f"options.{key}",
        )


def _schema(fmt: str | dict[str, object] | None) -> str | None:
    if fmt is None or fmt == "":
        return None
    if fmt == "json":
        return json.dumps({"type": "object"})
    if isinstance(fmt, dict):
        return json.dumps(fmt)
    raise InvalidRequest("format must be 'json' or a JSON schema object", param="format")


def generation_params(req: Generation, limits: request_parts.Limits) -> GenerationParams:
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


def template_kwargs(think: bool | str | None) -> TemplateKwargs | None:
    """``think`` as the thinking switch (effort words such as 'high' turn it on)."""
    if think is None:
        return None
    if isinstance(think, str):
        return thinking_kwargs(think.lower() not in ("false", "none", ""))
    return thinking_kwargs(think)


def to_messages(
    messages: Sequence[ChatMessage], *, limits: ImageLimits = DEFAULT_LIMITS
) -> list[Message]:
    """Ollama chat messages as engine messages (tool results matched to their calls;
    pictures over ``limits`` are a 400)."""
    out: list[Message] = []
    pending: list[ToolCall] = []  # calls still waiting for their result, oldest first
    for i, message in enumerate(messages):
        where, role = f"messages[{i}]", message.role
        content = message.content or ""
        attached = pictures(message.images, f"{where}.images", f"messages.{i}.images", limits)
        if attached and role != "user":
            raise InvalidRequest(
                f"{where}: images go in user messages", param=f"messages.{i}.images"
            )
        if attached:
            out.append(Message("user", _marked(content, attached), images=attached))
        elif role in ("system", "user"):
            out.append(Message("system" if role == "system" else "user", content))
        elif role == "assistant":
            calls = tuple(_call(c, f"call_{i}_{j}") for j, c in enumerate(message.tool_calls or ()))
            pending += calls
            out.append(Message("assistant", content, tool_calls=calls, reasoning=message.thinking))
        elif role == "tool":
            name = message.tool_name or message.name
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


def _call(value: ToolCallIn, call_id: str) -> ToolCall:
    arguments = value.function.arguments or {}
    if isinstance(arguments, str):
        arguments = arguments_object(arguments)
    return ToolCall(call_id, value.function.name, json.dumps(arguments, ensure_ascii=False))


def tools_for_engine(tools: Sequence[Tool] | None) -> tuple[ToolSpec, ...] | None:
    """Ollama's function tools (in OpenAI's shape), checked, as the engine offers them."""
    out = []
    for i, tool in enumerate(tools or ()):
        function = tool.function
        if tool.type != "function" or function is None:
            raise InvalidRequest(
                f"tools[{i}] must be {{'type': 'function', 'function': …}}", param=f"tools.{i}"
            )
        out.append(
            function_tool(
                function.name, function.description, function.parameters, f"tools[{i}].function"
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
