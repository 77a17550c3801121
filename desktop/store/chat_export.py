"""Conversations to and from files: the JSON export that imports back, and Markdown.

Pure translation between stored records and text; ``ChatStore`` reads and writes the
database around it. Reading checks every field first, so a bad file writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from desktop.errors import InvalidRequest
from desktop.store.chat_records import ChatMessage, Conversation
from desktop.store.export_fields import CONVERSATION_FIELDS, MESSAGE_FIELDS, check_fields
from desktop.store.sources import parse_sources, source_dicts, sources_markdown

EXPORT_VERSION = 1
Exported = Sequence[tuple[Conversation, Sequence[ChatMessage]]]


def json_export(conversations: Exported) -> str:
    """Conversations with their messages as JSON that ``parse_export`` reads back."""
    payload = {"edgedesk_export": EXPORT_VERSION, "conversations": [
        {**_header_dict(c), "messages": [_message_dict(m) for m in messages]}
        for c, messages in conversations]}
    return json.dumps(payload, ensure_ascii=False, indent=2)


def parse_export(text: str) -> list[tuple[dict[str, Any], list[ChatMessage]]]:
    """Each conversation of a JSON export (header fields, messages), all checked first."""
    try:
        payload = json.loads(text)
        items = payload["conversations"]
    except (ValueError, KeyError, TypeError, RecursionError):  # nesting too deep too
        raise InvalidRequest("not an EdgeDesk conversation export") from None
    return [_conversation_from(item, number)
            for number, item in enumerate(_objects(items), start=1)]


def markdown_export(conversations: Exported) -> str:
    """Conversations with their messages as readable Markdown."""
    parts: list[str] = []
    for conv, messages in conversations:
        when = datetime.fromtimestamp(conv.created, UTC).strftime("%Y-%m-%d %H:%M UTC")
        lines = [f"# {conv.title or 'Untitled conversation'}", "",
                 f"*{conv.model or 'unknown model'} · {when}*", ""]
        if conv.tags:
            lines += ["Tags: " + ", ".join(conv.tags), ""]
        if conv.collection:
            lines += ["Documents: " + conv.collection, ""]
        if not conv.think:
            lines += ["Thinking: off (the Think switch; answers without thinking first)",
                      ""]
        for msg in messages:
            lines += [f"## {msg.role.capitalize()}", ""]
            if msg.reasoning:
                lines += ["> " + line for line in msg.reasoning.splitlines()] + [""]
            lines += tools_markdown(msg.tool_steps)
            lines += [msg.content, ""]
            if msg.versions:  # the chosen version only; the JSON export has them all
                lines += [f"*(answer version {msg.version + 1} of {len(msg.versions) + 1})*",
                          ""]
            if msg.ending:
                lines += [f"*({msg.ending})*", ""]
            lines += sources_markdown(msg.sources)
        parts.append("\n".join(lines))
    return "\n---\n\n".join(parts)


def tools_markdown(steps: Sequence[dict[str, Any]]) -> list[str]:
    """An answer's tool calls as collapsed blocks (``<details>``), one per call."""
    lines: list[str] = []
    for step in steps:
        if step.get("content"):
            lines += [str(step["content"]), ""]
        results = {r.get("call_id"): r for r in step.get("results", [])
                   if isinstance(r, dict)}
        for call in step.get("calls", []):
            if not isinstance(call, dict):
                continue
            result = results.get(call.get("id"), {})
            status = result.get("status", "not run")
            lines += [f"<details><summary>Tool {call.get('name')} ({status})</summary>", "",
                      "```json", str(call.get("arguments", "")), "```", "",
                      "```", str(result.get("text", "")), "```", "", "</details>", ""]
    return lines


def _header_dict(conv: Conversation) -> dict[str, Any]:
    return {"title": conv.title, "model": conv.model, "tags": list(conv.tags),
            "created": conv.created, "updated": conv.updated, "collection": conv.collection,
            "think": conv.think, "parameters": conv.parameters}


def _message_dict(message: ChatMessage) -> dict[str, Any]:
    data = asdict(message)
    data.pop("id")
    data["sources"] = source_dicts(message.sources)
    if not message.versions:  # most answers have one version: no noise in the file
        data.pop("versions")
        data.pop("version")
    return data


def version_dict(message: ChatMessage) -> dict[str, Any]:
    """One version of an answer as the store and the JSON export keep it (plain JSON)."""
    data = _message_dict(message)
    data.pop("versions", None)
    data.pop("version", None)
    return data


def version_message(data: dict[str, Any]) -> ChatMessage | None:
    """A stored version of an answer back as a message; None for a damaged one."""
    try:
        return _message_from(data, "a version")
    except InvalidRequest:
        return None


def _objects(items: object) -> list[dict[str, Any]]:
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise InvalidRequest("not an EdgeDesk conversation export")
    return items


def _conversation_from(item: dict[str, Any],
                       number: int) -> tuple[dict[str, Any], list[ChatMessage]]:
    """The ``number``th conversation of an export, every field checked, and its messages."""
    where = f"conversation {number}"
    check_fields(item, CONVERSATION_FIELDS, where)
    return item, [_message_from(m, f"{where}, message {n}")
                  for n, m in enumerate(item.get("messages", []), start=1)]


def _message_from(data: object, where: str) -> ChatMessage:
    """A message of an export; older exports (before grounded chats) have no sources."""
    if not isinstance(data, dict):
        raise InvalidRequest(f"not an EdgeDesk conversation export: {where} is not an object")
    check_fields(data, MESSAGE_FIELDS, where)
    fields = {k: v for k, v in data.items()
              if k not in ("id", "sources", "tool_steps", "versions", "version")}
    steps = data.get("tool_steps") or []
    if not all(isinstance(s, dict) for s in steps):
        raise InvalidRequest(f"not an EdgeDesk conversation export: {where}'s tool_steps "
                             "must be objects")
    # Each earlier version is checked as a message of its own, then kept in plain form.
    versions = tuple(version_dict(_message_from(v, f"{where}, version {n}"))
                     for n, v in enumerate(data.get("versions") or [], start=1))
    version = min(int(data.get("version") or 0), len(versions))
    try:
        return ChatMessage(**fields, sources=parse_sources(data.get("sources")),
                           tool_steps=tuple(steps), versions=versions, version=version)
    except TypeError as exc:
        raise InvalidRequest(f"not an EdgeDesk conversation export: {exc}") from None
