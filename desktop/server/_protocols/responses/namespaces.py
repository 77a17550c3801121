"""Codex's ``namespace`` tools as the flat function tools a model is shown, and back.

Codex groups its MCP servers' tools (and its sub-agent tools) in ``namespace`` tools of
the Responses API; a chat template knows only function tools with one name each. Here a
namespace's functions become top-level function tools under Codex's own flat names
(``mcp__github__`` + ``create_issue`` is ``mcp__github__create_issue``), and
``Namespaced`` maps a name the model called back to (namespace, the tool's own name).
Pure functions on the request's typed tools: ``translate`` applies them to the request
and ``output`` to the output items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from desktop.server._protocols.responses.requests import (
    Tool,
    ToolChoice,
    ToolChoiceObject,
    dumped,
)

NAMESPACE_DELIMITER = "__"  # what Codex joins a namespace and a tool name with (ToolName)


def flat_name(namespace: str, name: str) -> str:
    """A namespaced tool's one name, as Codex flattens it: ``mcp__github__`` +
    ``create_issue`` is ``mcp__github__create_issue`` (stray ``_`` at the join trimmed)."""
    return namespace.rstrip("_") + NAMESPACE_DELIMITER + name.lstrip("_")


@dataclass(frozen=True)
class Namespaced:
    """The function tools flattened out of ``namespace`` tools: flat name → (namespace,
    the tool's own name)."""

    flat: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # (namespace, own name) → flat name, for ``join``; the first flat name of a pair
    # offered twice (the copy whose tools got no suffix).
    _joined: dict[tuple[str, str], str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        joined: dict[tuple[str, str], str] = {}
        for flat, pair in self.flat.items():
            joined.setdefault(pair, flat)
        object.__setattr__(self, "_joined", joined)  # frozen: set once, here

    def split(self, name: str) -> tuple[str | None, str]:
        """(namespace, own name) of a name the model called; (None, name) if not flattened."""
        found = self.flat.get(name)
        return found if found is not None else (None, name)

    def join(self, namespace: str, name: str) -> str:
        """The flat name the model sees for ``name`` in ``namespace``."""
        found = self._joined.get((namespace, name))
        return found if found is not None else flat_name(namespace, name)


@dataclass(frozen=True)
class Flattened:
    """A request's tools and tool choice with namespaces flattened, and the map back."""

    tools: list[Tool] | None
    tool_choice: ToolChoice
    spaces: Namespaced


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``… when a tool already has it."""
    n, found = 2, name
    while found in taken:
        found, n = f"{name}_{n}", n + 1
    return found


def _is_function(tool: object) -> bool:
    """Whether ``tool`` (a typed tool, or a raw one inside a namespace) is a function."""
    kind = tool.get("type") if isinstance(tool, dict) else getattr(tool, "type", "?")
    return kind in ("function", None)


def _flat_choice(
    choice: ToolChoice, tools: Sequence[Tool], flat: Mapping[str, tuple[str, str]]
) -> ToolChoice:
    """A ``tool_choice`` naming a namespaced function (with its ``namespace``, or by its own
    name when only one namespace has it) as the flat name; any other choice unchanged."""
    if not isinstance(choice, ToolChoiceObject) or choice.type != "function":
        return choice
    name, namespace = choice.name, choice.namespace
    if not namespace and any(_is_function(t) and t.name == name for t in tools):
        return choice  # a top-level function of that name: it is the one named
    matches = [
        f for f, (ns, own) in flat.items() if own == name and (not namespace or ns == namespace)
    ]
    if len(matches) != 1:
        return choice
    fields = {k: v for k, v in dumped(choice).items() if k != "namespace"}
    return ToolChoiceObject.model_validate(fields | {"name": matches[0]})


def flatten_namespaces(tools: list[Tool] | None, tool_choice: ToolChoice) -> Flattened:
    """Each ``namespace`` tool's function tools as top-level function tools under
    unambiguous flat names, the choice renamed to match, and the map back.

    A name already taken gets ``_2``, ``_3``… Tools of other types inside a namespace
    stay in the list, so they are left out and named like any hosted tool; a namespace
    without a name or a named function is left out whole. Without a namespace the very
    same ``tools`` (and choice) come back.
    """
    if not any(t.type == "namespace" for t in tools or ()):
        return Flattened(tools, tool_choice, Namespaced())
    given = tools or []
    taken = {t.name for t in given if _is_function(t) and isinstance(t.name, str)}
    out: list[Tool] = []
    flat: dict[str, tuple[str, str]] = {}
    for tool in given:
        group, namespace = tool.tools, tool.name
        if (
            tool.type != "namespace"
            or not isinstance(group, list)
            or not isinstance(namespace, str)
            or not namespace
        ):
            out.append(tool)
            continue
        made: list[Tool] = []
        for inner in group:
            if not isinstance(inner, dict):
                continue
            own = inner.get("name")
            if _is_function(inner) and isinstance(own, str) and own:
                name = _unique(flat_name(namespace, own), taken)
                taken.add(name)
                flat[name] = (namespace, own)
                made.append(Tool.model_validate({**inner, "type": "function", "name": name}))
            elif not _is_function(inner):
                # A custom or hosted tool in a namespace: left out, and named.
                made.append(Tool.model_validate(inner))
        # No function in it (or none with a name): the namespace is left out whole.
        out += made if any(t.type == "function" for t in made) else [tool]
    return Flattened(out, _flat_choice(tool_choice, given, flat), Namespaced(flat))
