"""Conversations to and from files: the JSON export that imports back, and Markdown.

Pure translation between stored records and text; ``ChatStore`` reads and writes the
database around it. Reading checks every field first, so a bad file writes nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from desktop.base.errors import InvalidRequest
from desktop.store._chat_records import Attachment, ChatMessage, Conversation
from desktop.store._cited_passages import parse_sources, source_dicts, sources_markdown
from desktop.store._export_fields import (
    ATTACHMENT_FIELDS,
    CONVERSATION_FIELDS,
    MESSAGE_FIELDS,
    check_fields,
)

EXPORT_VERSION = 1
Exported = Sequence[tuple[Conversation, Sequence[ChatMessage]]]
# Reads a file an export names beside itself (its folder/name), or None when it is missing.
ReadFile = Callable[[str], "bytes | None"]


def attachments_folder(export_name: str) -> str:
    """The folder an export's attachments are written to, beside it: ``chat.md`` ->
    ``chat-attachments`` (the same for the Markdown and the JSON of one chat)."""
    base = export_name.rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base
    return f"{stem or 'export'}-attachments"


def attachment_file(item: Attachment) -> str:
    """The name an attachment is written under: unique by content, safe on every system."""
    stem, dot, suffix = item.name.rpartition(".")
    safe = re.sub(r"[^\w.-]+", "_", stem if dot else item.name).strip("._")[:60] or "file"
    ext = re.sub(r"[^\w]+", "", suffix)[:10] if dot else ""
    return f"{item.sha256[:12]}-{safe}" + (f".{ext}" if ext else "")


def attachment_files(conversations: Exported) -> dict[str, bytes]:
    """Every attachment of the exported messages by the file name it is written under."""
    return {
        attachment_file(a): a.data
        for _, messages in conversations
        for m in messages
        for a in m.attachments
    }


def json_export(conversations: Exported, files: str | None = None) -> str:
    """Conversations with their messages as JSON that ``parse_export`` reads back.

    ``files``: the folder (beside the export) the attachments are written to, named in
    the JSON; None puts their bytes in the JSON itself (base64), e.g. an encrypted export.
    """
    payload = {
        "edgedesk_export": EXPORT_VERSION,
        "conversations": [
            {**_header_dict(c), "messages": [_message_dict(m, files) for m in messages]}
            for c, messages in conversations
        ],
    }
    return json.dumps(payload, ensure_ascii=False, indent=2)


# Any: each header as the file had it, every field checked (check_fields)
def parse_export(
    text: str, read_file: ReadFile | None = None
) -> list[tuple[dict[str, Any], list[ChatMessage]]]:
    """Each conversation of a JSON export (header fields, messages), all checked first.

    ``read_file`` reads the attachment files the export names beside itself.
    """
    try:
        payload = json.loads(text)
        items = payload["conversations"]
    except (ValueError, KeyError, TypeError, RecursionError):  # nesting too deep too
        raise InvalidRequest("not an EdgeDesk conversation export") from None
    return [
        _conversation_from(item, number, read_file)
        for number, item in enumerate(_objects(items), start=1)
    ]


def attachments_markdown(items: Sequence[Attachment], files: str | None) -> list[str]:
    """A question's attachments: pictures shown, files linked (from ``files``), or
    listed by name and size when they are not written beside the export."""
    lines: list[str] = []
    for item in items:
        if files is None:
            lines.append(f"*(attached: {item.name}, {item.mime}, {item.size:,} bytes)*")
        elif item.kind == "image":
            lines.append(f"![{item.name}](<{files}/{attachment_file(item)}>)")
        else:
            lines.append(f"[📎 {item.name}](<{files}/{attachment_file(item)}>)")
    return [*lines, ""] if lines else []


def markdown_export(conversations: Exported, files: str | None = None) -> str:
    """Conversations with their messages as readable Markdown (attachments linked from
    the folder ``files`` beside it, or only named when None)."""
    parts: list[str] = []
    for conv, messages in conversations:
        when = datetime.fromtimestamp(conv.created, UTC).strftime("%Y-%m-%d %H:%M UTC")
        lines = [
            f"# {conv.title or 'Untitled conversation'}",
            "",
            f"*{conv.model or 'unknown model'} · {when}*",
            "",
        ]
        if conv.tags:
            lines += ["Tags: " + ", ".join(conv.tags), ""]
        if conv.collection:
            lines += ["Documents: " + conv.collection, ""]
        if not conv.think:
            lines += ["Thinking: off (the Think switch; answers without thinking first)", ""]
        for msg in messages:
            lines += [f"## {msg.role.capitalize()}", ""]
            if msg.reasoning:
                lines += ["> " + line for line in msg.reasoning.splitlines()] + [""]
            lines += tools_markdown(msg.tool_steps)
            lines += attachments_markdown(msg.attachments, files)
            lines += [msg.content, ""]
            if msg.versions:  # the chosen version only; the JSON export has them all
                lines += [f"*(answer version {msg.version + 1} of {len(msg.versions) + 1})*", ""]
            if msg.ending:
                lines += [f"*({msg.ending})*", ""]
            lines += sources_markdown(msg.sources)
        parts.append("\n".join(lines))
    return "\n---\n\n".join(parts)


# Any: tool rounds as stored JSON (ChatMessage.tool_steps); read defensively with .get()
def tools_markdown(steps: Sequence[dict[str, Any]]) -> list[str]:
    """An answer's tool calls as collapsed blocks (``<details>``), one per call."""
    lines: list[str] = []
    for step in steps:
        if step.get("content"):
            lines += [str(step["content"]), ""]
        results = {r.get("call_id"): r for r in step.get("results", []) if isinstance(r, dict)}
        for call in step.get("calls", []):
            if not isinstance(call, dict):
                continue
            result = results.get(call.get("id"), {})
            status = result.get("status", "not run")
            lines += [
                f"<details><summary>Tool {call.get('name')} ({status})</summary>",
                "",
                "```json",
                str(call.get("arguments", "")),
                "```",
                "",
                "```",
                str(result.get("text", "")),
                "```",
                "",
                "</details>",
                "",
            ]
    return lines


def _header_dict(conv: Conversation) -> dict[str, object]:
    return {
        "title": conv.title,
        "model": conv.model,
        "tags": list(conv.tags),
        "created": conv.created,
        "updated": conv.updated,
        "collection": conv.collection,
        "think": conv.think,
        "parameters": conv.parameters,
    }


def _message_dict(message: ChatMessage, files: str | None) -> dict[str, object]:
    data = asdict(message)
    data.pop("id")
    data["sources"] = source_dicts(message.sources)
    data["attachments"] = [_attachment_dict(a, files) for a in message.attachments]
    if not message.attachments:
        data.pop("attachments")  # exports without attachments read as before
    if not message.versions:  # most answers have one version: no noise in the file
        data.pop("versions")
        data.pop("version")
    return data


def _attachment_dict(item: Attachment, files: str | None) -> dict[str, str]:
    out: dict[str, str] = {
        "kind": item.kind,
        "name": item.name,
        "mime": item.mime,
        "sha256": item.sha256,
        "text": item.text,
    }
    if files is None:
        out["data"] = base64.b64encode(item.data).decode("ascii")
    else:
        out["file"] = f"{files}/{attachment_file(item)}"
    return out


def version_dict(message: ChatMessage) -> dict[str, object]:
    """One version of an answer as the store and the JSON export keep it (plain JSON)."""
    data = _message_dict(message, None)
    data.pop("versions", None)
    data.pop("version", None)
    return data


def version_message(data: dict[str, object]) -> ChatMessage | None:
    """A stored version of an answer back as a message; None for a damaged one."""
    try:
        return _message_from(data, "a version", None)
    except InvalidRequest:
        return None


# Any: untrusted JSON objects, each checked before use
def _objects(items: object) -> list[dict[str, Any]]:
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise InvalidRequest("not an EdgeDesk conversation export")
    return items


# Any: untrusted JSON, checked field by field here
def _conversation_from(
    item: dict[str, Any], number: int, read_file: ReadFile | None
) -> tuple[dict[str, Any], list[ChatMessage]]:
    """The ``number``th conversation of an export, every field checked, and its messages."""
    where = f"conversation {number}"
    check_fields(item, CONVERSATION_FIELDS, where)
    return item, [
        _message_from(m, f"{where}, message {n}", read_file)
        for n, m in enumerate(item.get("messages", []), start=1)
    ]


def _attachment_from(data: object, where: str, read_file: ReadFile | None) -> Attachment:
    """An attachment of an export: its bytes inline (base64) or from the file it names."""
    if not isinstance(data, dict):
        raise InvalidRequest(f"not an EdgeDesk conversation export: {where} is not an object")
    check_fields(data, ATTACHMENT_FIELDS, where)
    if data.get("kind") not in ("image", "file") or not data.get("name"):
        raise InvalidRequest(
            f"not an EdgeDesk conversation export: {where} needs a kind "
            "('image' or 'file') and a name"
        )
    raw: bytes | None = None
    if isinstance(data.get("data"), str):
        try:
            raw = base64.b64decode(data["data"], validate=True)
        except (binascii.Error, ValueError):
            raise InvalidRequest(
                f"not an EdgeDesk conversation export: {where}'s data is not base64"
            ) from None
    elif isinstance(data.get("file"), str):
        raw = read_file(data["file"]) if read_file is not None else None
        if raw is None:
            raise InvalidRequest(
                f"{where}: the attached file {data['file']} is missing "
                "beside the export; nothing was imported"
            )
    if raw is None:
        raise InvalidRequest(
            f"not an EdgeDesk conversation export: {where} has neither data nor file"
        )
    return Attachment(
        str(data["kind"]),
        str(data["name"]),
        str(data.get("mime") or "application/octet-stream"),
        raw,
        hashlib.sha256(raw).hexdigest(),
        str(data.get("text") or ""),
    )


def _message_from(data: object, where: str, read_file: ReadFile | None) -> ChatMessage:
    """A message of an export; older exports (before grounded chats) have no sources."""
    if not isinstance(data, dict):
        raise InvalidRequest(f"not an EdgeDesk conversation export: {where} is not an object")
    check_fields(data, MESSAGE_FIELDS, where)
    fields = {
        k: v
        for k, v in data.items()
        if k not in ("id", "sources", "tool_steps", "attachments", "versions", "version")
    }
    attached = tuple(
        _attachment_from(a, f"{where}, attachment {n}", read_file)
        for n, a in enumerate(data.get("attachments") or [], start=1)
    )
    steps = data.get("tool_steps") or []
    if not all(isinstance(s, dict) for s in steps):
        raise InvalidRequest(
            f"not an EdgeDesk conversation export: {where}'s tool_steps must be objects"
        )
    # Each earlier version is checked as a message of its own, then kept in plain form.
    versions = tuple(
        version_dict(_message_from(v, f"{where}, version {n}", read_file))
        for n, v in enumerate(data.get("versions") or [], start=1)
    )
    version = min(int(data.get("version") or 0), len(versions))
    try:
        return ChatMessage(
            **fields,
            sources=parse_sources(data.get("sources")),
            tool_steps=tuple(steps),
            attachments=attached,
            versions=versions,
            version=version,
        )
    except TypeError as exc:
        raise InvalidRequest(f"not an EdgeDesk conversation export: {exc}") from None
