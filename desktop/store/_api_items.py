"""How a Responses API item is kept as a message row: its role, its plain text, a title.

Pure functions over the item objects the Responses API exchanges (messages with text
parts, ``function_call``, ``function_call_output``, ``reasoning``, ``mcp_call`` ...).
The item itself is kept verbatim beside these; they only make the row readable (a
role, words) without parsing the JSON. Used by ``store._responses``. Migration 14, which
moved the old ``api_responses`` rows into conversations, has its own frozen copy
(``store._migration_14_items``), so changing this module never changes that migration.
"""

from __future__ import annotations

from typing import Any

TITLE_CHARS = 80
MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})


def item_role(item: object) -> str:
    """The message role an item is kept under: a message's own role, ``tool`` for a
    function call's output, ``assistant`` for what the model produced (calls, reasoning)."""
    if not isinstance(item, dict):
        return "user"
    role = item.get("role")
    if isinstance(role, str) and role in MESSAGE_ROLES:
        return role
    if item.get("type") == "function_call_output":
        return "tool"
    return "assistant"


def item_text(item: object) -> str:
    """The plain words of an item: its text parts, a call's name and arguments, a
    reasoning summary, a tool's output; pictures and files leave no words."""
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
    """A conversation title from the first user words, cut short ('' for none)."""
    for item in items:
        if item_role(item) == "user":
            text = " ".join(item_text(item).split())
            if text:
                return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
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
