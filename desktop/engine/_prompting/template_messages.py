"""The conversation as each chat-template family expects to read it.

OpenAI clients send one shape (assistant ``tool_calls`` with JSON-text arguments, results
as role ``tool``); the templates models were trained with read others:

- GLM-4.5+ and most recent templates iterate ``arguments.items()``: they get objects
  (as vLLM and llama.cpp's server pass them).
- Templates that test ``arguments is string`` (Kimi K2 Instruct/Thinking) print a string
  as it is, so they get the original text and a call round-trips exactly.
- GLM-4 (glm-4-9b-chat, GLM-4-0414, GLM-Z1) render a past call as an assistant turn
  whose ``metadata`` is the function name and whose content is the arguments, and a
  result as role ``observation``; OpenAI history is mapped to that, or it would vanish
  from the prompt.

Pure functions of plain values; safe on any thread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from desktop.engine._types import Message

_ARGS_AS_STRING = re.compile(r"arguments['\"]?\]?\s+is\s+(?:not\s+)?string")
# GLM-4-0414/Z1 read message.get("metadata"), glm-4-9b-chat item['metadata'].
_METADATA_STYLE = re.compile(r"""get\(\s*['"]metadata['"]|\[\s*['"]metadata['"]\s*\]""")


@dataclass(frozen=True)
class TemplateStyle:
    """How one template wants tool calls and results to look."""

    string_arguments: bool  # print argument text as-is (else: objects)
    glm_metadata: bool  # GLM-4-0414/Z1: calls as ``metadata`` turns, results as ``observation``


def style_of(template_text: str) -> TemplateStyle:
    """Read from the template text which message shapes it understands."""
    return TemplateStyle(
        string_arguments=bool(_ARGS_AS_STRING.search(template_text)),
        glm_metadata=bool(_METADATA_STYLE.search(template_text)),
    )


def _arguments(text: str, as_string: bool) -> Any:
    if as_string:
        return text or "{}"
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        return text  # the API refuses such history; a stored chat keeps what it had


# Jinja templates read messages as JSON-shaped dicts; here they are only built and passed on.
def _openai_dict(message: Message, style: TemplateStyle) -> dict[str, object]:
    data: dict[str, object] = {"role": message.role, "content": message.content}
    if message.name:
        data["name"] = message.name
    if message.tool_call_id:
        data["tool_call_id"] = message.tool_call_id
    if message.reasoning:
        data["reasoning_content"] = message.reasoning
    if message.tool_calls:
        data["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": _arguments(c.arguments, style.string_arguments),
                },
            }
            for c in message.tool_calls
        ]
    return data


def _glm_metadata_dicts(message: Message) -> list[dict[str, object]]:
    if message.role == "tool":
        return [{"role": "observation", "content": message.content}]
    if message.role != "assistant" or not message.tool_calls:
        return [_openai_dict(message, TemplateStyle(False, False))]
    out: list[dict[str, object]] = []
    if message.content.strip():
        out.append({"role": "assistant", "content": message.content})
    for call in message.tool_calls:
        # GLM-4's own tool format: the function name after <|assistant|>, then the
        # arguments as JSON (its training data used ensure_ascii=False).
        args = _arguments(call.arguments, False)
        text = json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args
        out.append({"role": "assistant", "metadata": call.name, "content": text})
    return out


def template_messages(messages: Sequence[Message], template_text: str) -> list[dict[str, object]]:
    """The HF-style message dicts this template renders faithfully."""
    style = style_of(template_text)
    if style.glm_metadata:
        return [d for m in messages for d in _glm_metadata_dicts(m)]
    return [_openai_dict(m, style) for m in messages]


def late_system_texts(messages: Sequence[Message]) -> list[str]:
    """The texts of the system messages after the first message (a template's one place)."""
    return [m.content for m in messages[1:] if m.role == "system" and m.content.strip()]


def fold_system_turns(messages: Sequence[Message]) -> list[Message]:
    """The conversation with one leading system turn and no system turn after it.

    For templates that have no place for a system message after the first (Gemma's and
    Mistral's check that roles alternate; others skip it): the leading ones are joined
    into one, and each later one opens the next user turn (or closes the last one when
    no user turn follows), so its words still reach the model where they were said and
    the turns still alternate.
    """
    lead: list[str] = []
    out: list[Message] = []
    pending: list[str] = []
    for m in messages:
        if m.role == "system":
            (pending if out else lead).append(m.content)
        elif m.role == "user" and pending:
            out.append(replace(m, content="\n\n".join([*pending, m.content])))
            pending = []
        else:
            out.append(m)
    if pending:
        last = out[-1] if out else None
        if last is not None and last.role == "user":
            out[-1] = replace(last, content="\n\n".join([last.content, *pending]))
        else:
            out.append(Message("user", "\n\n".join(pending)))
    head = [Message("system", "\n\n".join(lead))] if lead else []
    return head + out
