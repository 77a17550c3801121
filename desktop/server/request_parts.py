"""Checks and shapes the request translations of several protocols share.

Responses, Anthropic and Ollama requests all name function tools, a forced tool and a
thinking switch in their own words; each ends up as the OpenAI-shaped tool the engine
renders. Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from desktop.errors import InvalidRequest


def function_tool(
    name: object, description: object, parameters: object, where: str
) -> dict[str, Any]:
    """One tool in the OpenAI shape the engine renders, checked field by field."""
    if not isinstance(name, str) or not name or len(name) > 128:
        raise InvalidRequest(
            f"{where}.name must be a non-empty string of at most 128 characters",
            param=f"{where}.name",
        )
    if description is not None and not isinstance(description, str):
        raise InvalidRequest(f"{where}.description must be a string", param=f"{where}.description")
    if parameters is not None and not isinstance(parameters, dict):
        raise InvalidRequest(f"{where}: the parameters schema must be a JSON object", param=where)
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = parameters if parameters else {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def only_tool(tools: list[dict[str, Any]], name: str, param: str) -> list[dict[str, Any]]:
    """The one tool a named choice forces (400 naming ``param`` when it is not offered)."""
    chosen = [t for t in tools if t["function"]["name"] == name]
    if not chosen:
        raise InvalidRequest(
            f"tool_choice names '{name}', which is not among the tools", param=param
        )
    return chosen


def arguments_object(arguments: str) -> dict[str, Any]:
    """A call's JSON arguments text as an object (``{}`` when it is not one)."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def thinking_kwargs(enabled: bool | None) -> dict[str, Any] | None:
    """The chat template's thinking switch (None: leave the model's default)."""
    return None if enabled is None else {"enable_thinking": enabled}
