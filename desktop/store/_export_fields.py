"""The fields of a conversation export and the JSON type each must have.

An export may be edited by hand or crafted by someone else; every field is checked before
anything is stored, so a wrong type is refused by name instead of failing half-way
through an import inside SQLite.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from desktop.base.errors import InvalidRequest

CONVERSATION_FIELDS = {
    "title": "text",
    "model": "text or null",
    "tags": "a list of text",
    "created": "a number or null",
    "updated": "a number or null",
    "collection": "text or null",
    "think": "true/false",
    "messages": "a list",
    "parameters": "an object or null",
}
MESSAGE_FIELDS = {
    "role": "text",
    "content": "text",
    "reasoning": "text or null",
    "model": "text or null",
    "parameters": "an object",
    "prompt_tokens": "a whole number or null",
    "completion_tokens": "a whole number or null",
    "timings": "an object",
    "created": "a number or null",
    "finish_reason": "text or null",
    "error": "text or null",
    "tool_steps": "a list",
    "attachments": "a list",
    "versions": "a list",
    "version": "a whole number",
}
ATTACHMENT_FIELDS = {
    "kind": "text",
    "name": "text",
    "mime": "text or null",
    "sha256": "text or null",
    "text": "text or null",
    "data": "text or null",
    "file": "text or null",
}


_MAX_INT = 2**63 - 1  # SQLite's integers; a bigger one would fail inside the insert


def _number(value: object) -> bool:
    if isinstance(value, int):
        return -_MAX_INT <= value <= _MAX_INT
    return isinstance(value, float) and math.isfinite(value)


def _text(value: object) -> bool:
    """Text SQLite can store: JSON may carry a lone surrogate (``"\\ud800"``) it cannot."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_CHECKS: dict[str, Callable[[object], bool]] = {
    "text": _text,
    "a number": _number,
    "a whole number": lambda value: isinstance(value, int) and 0 <= value <= _MAX_INT,
    "a list of text": lambda value: isinstance(value, list) and all(_text(v) for v in value),
    "a list": lambda value: isinstance(value, list),
    "an object": lambda value: isinstance(value, dict),
}


def _fits(value: object, kind: str) -> bool:
    if kind == "true/false":
        return isinstance(value, bool)
    if value is None:
        return kind.endswith(" or null")
    # JSON true/false arrives as a Python int: only a flag's kind takes it.
    return not isinstance(value, bool) and _CHECKS[kind.removesuffix(" or null")](value)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    kinds = {str: "text", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def check_fields(data: Mapping[str, object], kinds: dict[str, str], where: str) -> None:
    """InvalidRequest naming the first field of ``data`` whose value is not of its kind."""
    for name, kind in kinds.items():
        if name in data and not _fits(data[name], kind):
            raise InvalidRequest(
                f"not an EdgeDesk conversation export: {where}: '{name}' "
                f"must be {kind}, not {_json_kind(data[name])}"
            )
