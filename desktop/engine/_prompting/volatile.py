"""Volatile lines: text clients put in system prompts that changes on every request.

Prefix caching reuses a slot's KV cache only up to the first token that differs, so a
line near the top of a system prompt that changes each turn makes every turn re-read
the whole prompt (20k tokens for Claude Code: ggml-org/llama.cpp#19494, 80 s → 4 s per
turn once handled). Each pattern below is metadata the client adds for its own
accounting, not words for the model: removing it never changes what is asked. The
list is documented in docs/architecture.md ("Prompt caching"); add to both.

- Claude Code ≥ 2.1.36, its first system block: a billing header whose ``cch`` (and
  version suffix) change per request, e.g.
  ``x-anthropic-billing-header: cc_version=2.1.37.0d9; cc_entrypoint=cli; cch=fa690;``

llama-server rewrites the ``cch`` value to ``fffff``; we remove the whole header (its
``key=value;`` fields only, so text that follows on the same line stays), because the
version's suffix changes with the request too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from desktop.engine._types import Message

# (name, pattern): each matches exactly the volatile text, anchored at a line start.
VOLATILE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "claude-code-billing-header",
        re.compile(
            r"^x-anthropic-billing-header:(?:[ \t]*[A-Za-z0-9_.-]+=[^;\n]*;)+[ \t]*\n?",
            re.MULTILINE,
        ),
    ),
)


def strip_volatile(text: str) -> str:
    """``text`` without the volatile lines of ``VOLATILE_PATTERNS`` (else unchanged)."""
    if "x-anthropic-billing-header:" not in text:  # the common case costs one scan
        return text
    for _, pattern in VOLATILE_PATTERNS:
        text = pattern.sub("", text)
    return text


def stable_messages(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with volatile lines removed from system turns (only there)."""
    return [
        replace(m, content=strip_volatile(m.content))
        if m.role == "system" and "x-anthropic-billing-header:" in m.content
        else m
        for m in messages
    ]
