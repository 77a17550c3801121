"""Checks and shapes the request translations of several protocols share.

Responses, Anthropic and Ollama requests all name function tools, a forced tool and a
thinking switch in their own words; each tool ends up as the engine's typed
``ToolSpec``. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from desktop.base.defaults import GENERATION_TIMEOUT_S, MAX_TOKENS_LIMIT
from desktop.base.errors import InvalidRequest
from desktop.engine import ToolSpec

# Variables for the model's chat template (``enable_thinking``…): JSON values the
# template reads, as a client may also send them (``chat_template_kwargs``).
TemplateKwargs = dict[str, object]


def function_tool(name: object, description: object, parameters: object, where: str) -> ToolSpec:
    """One tool as the engine offers it, checked field by field (no parameters: an
    empty object schema)."""
    if not isinstance(name, str) or not name or len(name) > 128:
        raise InvalidRequest(
            f"{where}.name must be a non-empty string of at most 128 characters",
            param=f"{where}.name",
        )
    if description is not None and not isinstance(description, str):
        raise InvalidRequest(f"{where}.description must be a string", param=f"{where}.description")
    if parameters is not None and not isinstance(parameters, dict):
        raise InvalidRequest(f"{where}: the parameters schema must be a JSON object", param=where)
    return ToolSpec(
        name,
        description or None,
        parameters if parameters else {"type": "object", "properties": {}},
    )


def only_tool(tools: Sequence[ToolSpec], name: str, param: str) -> tuple[ToolSpec, ...]:
    """The one tool a named choice forces (400 naming ``param`` when it is not offered)."""
    chosen = tuple(t for t in tools if t.name == name)
    if not chosen:
        raise InvalidRequest(
            f"tool_choice names '{name}', which is not among the tools", param=param
        )
    return chosen


def arguments_object(arguments: str) -> dict[str, object]:
    """A call's JSON arguments text as an object (``{}`` when it is not one)."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def thinking_kwargs(enabled: bool | None) -> TemplateKwargs | None:
    """The chat template's thinking switch (None: leave the model's default)."""
    return None if enabled is None else {"enable_thinking": enabled}


@dataclass(frozen=True)
class Limits:
    """The server's limits that shape generation parameters."""

    max_tokens: int = MAX_TOKENS_LIMIT
    timeout_s: float | None = GENERATION_TIMEOUT_S


def forced_call_schema(tools: Sequence[ToolSpec]) -> str:
    """A JSON schema for exactly one ``{"name", "arguments"}`` call of one of ``tools``.

    Sampling under its grammar makes a forced call happen whatever the model would
    rather say; the answer is then a bare JSON call, which the tool-call parser reads.
    """
    options = []
    for tool in tools:
        options.append(
            {
                "type": "object",
                "properties": {
                    "name": {"const": tool.name},
                    "arguments": tool.parameters or {"type": "object"},
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return json.dumps(options[0] if len(options) == 1 else {"anyOf": options})
