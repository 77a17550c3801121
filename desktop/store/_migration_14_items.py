"""Migration 14's own frozen copy of how an old Responses item became a message row.

A migration must turn an old database into the same rows on every machine, whenever it
runs, so migration 14 (``_migrations.responses_into_conversations``) does not import the
live ``store._api_items``, which may change as the Responses API grows. This is that
module's code as it was when migration 14 shipped. NEVER change it: a fix belongs in
``store._api_items`` (and, if old rows need it, a new numbered migration).
"""

from __future__ import annotations

from typing import Any

_TITLE_CHARS = 80
_MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})


def item_role(item: object) -> str:
    """The message role an item was kept under by migration 14: a message's own role,
    ``tool`` for a function call's output, ``assistant`` for anything else."""
    if not isinstance(item, dict):
        return "user"
    role = item.get("role")
    if isinstance(role, str) and role in _MESSAGE_ROLES:
        return role
    if item.get("type") == "function_call_output":
        return "tool"
    return "assistant"


def item_text(item: object) -> str:
    """The plain words migration 14 kept for an item: its text parts, a call's name and
    arguments, a reasoning summary, a tool's output."""
    if not isinstance(item, dict):
        return ""
    words: list[str] = []
    if item.get("type") in ("function_call", "mcp_call", "custom_tool_call"):
        words += _strings(item.get("name"))
        words += _strings(item.get("arguments"))
        words += _strings(item.get("input"))
    for key in ("content", "summary", "output"):
        words += _strings(item.get(key))
    return "\n".join(w for w in words if w)


def title_of(items: list[Any]) -> str:
    """The title migration 14 gave a response: its first user words, cut short."""
    for item in items:
        if item_role(item) == "user":
            text = " ".join(item_text(item).split())
            if text:
                return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"
    return ""


def _strings(value: object) -> list[str]:
    """A string as is; the ``text`` of each part of a list of parts; nothing else."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [
            part["text"]
            for part in value
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
    return []
