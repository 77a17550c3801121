"""Ollama's answers: NDJSON lines, final-line stats, ``/api/tags`` and ``/api/show``.

Durations are nanoseconds, as Ollama reports them. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal, TypedDict

from desktop.engine import Delta, ToolCall
from desktop.server._answer import finish_reason
from desktop.server._request_parts import arguments_object
from desktop.server._services import ModelFacts


class CalledFunction(TypedDict):
    """A call's function, arguments as an object."""

    index: int
    name: str
    arguments: dict[str, object]  # the call's arguments: any JSON object


class ToolCallOut(TypedDict):
    """A tool call in Ollama's shape."""

    function: CalledFunction


class Details(TypedDict):
    """A model's ``details``."""

    parent_model: str
    format: Literal["gguf"]
    family: str
    families: list[str] | None
    parameter_size: str
    quantization_level: str


class Listed(TypedDict):
    """A model as ``/api/tags`` lists it."""

    name: str
    model: str
    modified_at: str
    size: int
    digest: str
    details: Details


class Shown(TypedDict):
    """``/api/show``'s body."""

    modelfile: str
    parameters: str
    template: str
    details: Details
    model_info: dict[str, str | int]
    capabilities: list[str]
    modified_at: str


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


def tool_calls_out(calls: Sequence[ToolCall]) -> list[ToolCallOut]:
    """Tool calls in Ollama's shape (arguments as an object)."""
    return [
        {"function": {"index": n, "name": c.name, "arguments": arguments_object(c.arguments)}}
        for n, c in enumerate(calls)
    ]


def line(body: Mapping[str, object]) -> bytes:
    """One NDJSON line."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\n"


def describe(model: str, info: ModelFacts) -> Listed:
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


def show(model: str, info: ModelFacts) -> Shown:
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
    model_info: dict[str, str | int] = {
        "general.architecture": arch,
        "general.parameter_count": int(info.get("parameters") or 0),
    }
    sizes = {
        "context_length": info.get("context_length"),
        "embedding_length": info.get("embedding_length"),
        "block_count": info.get("block_count"),
    }
    for key, value in sizes.items():
        if value:
            model_info[f"{arch}.{key}"] = int(value)
    return {
        "modelfile": f"# served by EdgeDesk from a GGUF file\nFROM {model}\n",
        "parameters": "",
        "template": info.get("chat_template") or "",
        "details": listed["details"],
        "model_info": model_info,
        "capabilities": capabilities,
        "modified_at": listed["modified_at"],
    }
