"""Codex's namespace tools flattened into the function tools a model sees, and back."""

from __future__ import annotations

import copy
from typing import Any

from desktop.server._protocols.responses import namespaces
from desktop.server._protocols.responses.namespaces import Flattened, Namespaced, flat_name
from desktop.server._protocols.responses.requests import ResponsesRequest, Tool, dumped
from tests.fixtures.codex_tools import AGENTS, GITHUB, WEATHER


def _typed(tools: list[Any] | None, choice: Any = None) -> ResponsesRequest:
    return ResponsesRequest.model_validate(
        {"model": "m", "input": "x", "tools": tools, "tool_choice": choice}
    )


def flatten_namespaces(tools: list[Any] | None, choice: Any) -> Flattened:
    """The flattening of the tools and choice a request sends (as the route reads them)."""
    req = _typed(tools, choice)
    return namespaces.flatten_namespaces(req.tools, req.tool_choice)


def _json(tools: list[Tool] | None) -> list[dict[str, Any]]:
    return [dumped(t) for t in tools or []]


def _functions(tools: list[Tool] | None) -> list[str]:
    return [t["name"] for t in _json(tools) if t.get("type") == "function"]


def test_namespace_tools_are_flattened_into_function_tools_the_model_sees() -> None:
    taken = {"type": "function", "name": "multi_agent_v1__close_agent", "parameters": {}}
    tools = [{"type": "web_search"}, GITHUB, AGENTS, WEATHER, taken]
    sent = copy.deepcopy(tools)
    flat = flatten_namespaces(tools, "auto")
    # Codex's own flat naming; a name already taken by a top-level tool gets a suffix.
    assert _functions(flat.tools) == [
        "mcp__github__create_issue",
        "multi_agent_v1__close_agent_2",
        "multi_agent_v1__create_issue",
        "get_weather",
        "multi_agent_v1__close_agent",
    ]
    assert _json(flat.tools)[1]["description"] == "File one"
    # What is not a function (web_search; custom inside a namespace) stays, to be left out.
    others = [t["type"] for t in _json(flat.tools) if t["type"] != "function"]
    assert others == ["web_search", "custom"]
    assert flat.tool_choice == "auto"
    assert flat.spaces.split("multi_agent_v1__close_agent_2") == ("multi_agent_v1", "close_agent")
    assert flat.spaces.split("get_weather") == (None, "get_weather")
    assert tools == sent  # the caller's tools (echoed back to the client) are untouched


def test_without_a_namespace_the_very_same_tools_come_back() -> None:
    req = _typed([WEATHER], {"type": "function", "name": "get_weather"})
    flat = namespaces.flatten_namespaces(req.tools, req.tool_choice)
    assert flat.tools is req.tools and flat.tool_choice is req.tool_choice
    assert flat.spaces == Namespaced()
    assert flatten_namespaces(None, None).tools is None


def test_odd_namespaces_are_left_whole_not_a_crash() -> None:
    odd: list[dict[str, Any]] = [
        {"type": "namespace", "tools": [WEATHER]},
        {"type": "namespace", "name": "x", "tools": 5},
        {"type": "namespace", "name": "y", "tools": [7, {"type": "function"}]},
    ]
    flat = flatten_namespaces(odd, None)
    assert _json(flat.tools) == odd and not flat.spaces.flat


def _chosen(flat: Flattened) -> object:
    choice = flat.tool_choice
    return choice if isinstance(choice, str) or choice is None else dumped(choice)


def test_a_choice_of_a_namespaced_tool_names_its_flat_tool() -> None:
    for choice in (
        {"type": "function", "name": "close_agent"},
        {"type": "function", "name": "close_agent", "namespace": "multi_agent_v1"},
        {"type": "function", "name": "multi_agent_v1__close_agent"},
    ):
        flat = flatten_namespaces([GITHUB, AGENTS], choice)
        assert _chosen(flat) == {"type": "function", "name": "multi_agent_v1__close_agent"}
    # In two namespaces and no namespace given: ambiguous, so left as sent (the route's 400).
    ambiguous = {"type": "function", "name": "create_issue"}
    assert _chosen(flatten_namespaces([GITHUB, AGENTS], ambiguous)) == ambiguous
    # A top-level function of that name is the one named; other choices pass through.
    own = {"type": "function", "name": "create_issue", "parameters": {}}
    assert _chosen(flatten_namespaces([GITHUB, own], ambiguous)) == ambiguous
    assert flatten_namespaces([GITHUB], "required").tool_choice == "required"


def test_flat_names_join_and_split_as_codex_names_them() -> None:
    assert flat_name("mcp__github__", "create_issue") == "mcp__github__create_issue"
    assert flat_name("agents", "_close") == "agents__close"  # stray "_" at the join trimmed
    spaces = flatten_namespaces([AGENTS, AGENTS], None).spaces
    # The second copy's tools got suffixes: joining finds the name the model was shown.
    assert spaces.join("multi_agent_v1", "close_agent") == "multi_agent_v1__close_agent"
    assert spaces.split("multi_agent_v1__close_agent_2") == ("multi_agent_v1", "close_agent")
    # A namespace no longer offered: Codex's flat name.
    assert spaces.join("mcp__github__", "create_issue") == "mcp__github__create_issue"
