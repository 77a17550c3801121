"""Plain values of the tool layer: a tool as the model is offered it, a call's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.base.errors import EdgeDeskError
from desktop.engine import ToolSpec as EngineToolSpec

BUILTIN = "edgedesk"  # the "server" name of the built-in document tools


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the name the model calls, what it does, its JSON Schema, where it runs."""

    name: str
    description: str
    # Any: a JSON Schema, any keywords
    parameters: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    server: str = BUILTIN
    needs_approval: bool = True  # built-in read-only tools: False

    def offered(self) -> EngineToolSpec:
        """The tool as the engine offers it to the model (what chat templates render)."""
        schema = self.parameters or {"type": "object", "properties": {}}
        return EngineToolSpec(self.name, self.description, schema)


@dataclass(frozen=True)
class ToolResult:
    """What a call returned, as text for the model; ``is_error``: the tool failed."""

    text: str
    is_error: bool = False


class ToolError(EdgeDeskError):
    """A tool could not be called (server refused, crashed, timed out, unknown tool)."""
