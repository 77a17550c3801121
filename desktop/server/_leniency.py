"""What the server leaves out of a request instead of refusing it, and how an answer ended.

Agents (Codex CLI, Claude Code) send tools that their own vendor runs on its servers:
``web_search``, ``file_search``, Anthropic's ``web_search_20250305``… (Codex's
``namespace`` groups of function tools are not among them: the Responses route flattens
them into function tools first, ``responses.namespaces.flatten_namespaces``; a namespace with
no function in it is left out here.) A local model cannot run them, and refusing the whole request
(as a strict server would) stops the agent at its first turn; llama-server leaves them
out, and so do we, naming them in the ``x-edgedesk-dropped-tools`` header and the log.
Only a request that *forces* one of them (``tool_choice``) is refused: its answer could
not be what the client asked for.

Pure functions of plain values; safe on any thread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from desktop.base.errors import InvalidRequest
from desktop.engine import Delta

DROPPED_TOOLS_HEADER = "x-edgedesk-dropped-tools"
CONTEXT_HEADER = "x-edgedesk-context"
# The Responses API's reason when the model's context, not max_output_tokens, ended the
# answer (OpenAI documents only max_output_tokens and content_filter; Codex prints any
# reason it gets, and this one names what to change).
CONTEXT_REASON = "context_length_exceeded"
# A header and log line carry only these characters of a client's tool type, and so many.
_SAFE = re.compile(r"[^A-Za-z0-9_.:-]")
MAX_LABEL = 64
MAX_LABELS = 32


@dataclass(frozen=True)
class Hosted:
    """A tool the server does not run, as the client named it."""

    kind: str  # its ``type`` ("web_search", "namespace", "web_search_20250305", …)
    name: str | None  # its own ``name`` or ``server_label`` when it has one
    inner: tuple[str, ...] = ()  # function names inside it (a namespace's tools)

    def names(self) -> set[str]:
        """Every name a ``tool_choice`` could use to force this tool."""
        return {n for n in (self.kind, self.name, *self.inner) if n}


def hosted(tool: Mapping[str, object]) -> Hosted:
    """The record of a tool that is left out."""
    kind = _SAFE.sub("", str(tool.get("type")))[:MAX_LABEL] or "unknown"
    name = tool.get("name") or tool.get("server_label")
    group = tool.get("tools")
    inner = tuple(
        str(t["name"])
        for t in (group if isinstance(group, list) else ())
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    )
    return Hosted(kind, name if isinstance(name, str) else None, inner)


def split_tools(
    tools: Sequence[object] | None, runs: Iterable[str | None]
) -> tuple[list[tuple[int, object]], list[Hosted]]:
    """The tools whose ``type`` is in ``runs`` (with their index), and the ones left out.

    A tool that is not an object is kept, so the per-tool check names its index.
    """
    kinds = tuple(runs)  # compared with ==: a client's type may be any JSON value
    kept: list[tuple[int, object]] = []
    left: list[Hosted] = []
    for i, tool in enumerate(tools or ()):
        if isinstance(tool, dict) and tool.get("type") not in kinds:
            left.append(hosted(tool))
        else:
            kept.append((i, tool))
    return kept, left


def labels(left: Sequence[Hosted]) -> list[str]:
    """The header's names of what was left out: each tool type once, in order."""
    return list(dict.fromkeys(h.kind for h in left))[:MAX_LABELS]


def refuse_forced(name: str | None, left: Sequence[Hosted], param: str = "tool_choice") -> None:
    """A 400 when ``tool_choice`` forces ``name``, a tool that was left out."""
    if not name:
        return
    for tool in left:
        if name in tool.names():
            raise InvalidRequest(
                f"tool_choice forces '{name}', a {tool.kind} tool this server does not run "
                "(hosted tools are left out of the prompt); force one of your function "
                "tools or use tool_choice 'auto'",
                param=param,
            )


def refuse_nothing_to_force(left: Sequence[Hosted], param: str = "tool_choice") -> None:
    """A 400 for a forced tool call when every tool given was left out (or none was)."""
    if left:
        raise InvalidRequest(
            "tool_choice forces a tool call but every tool given is one this server does "
            f"not run ({', '.join(labels(left))}); send function tools",
            param=param,
        )
    raise InvalidRequest("tool_choice forces a tool call but no tools were given", param=param)


def capped_max_tokens(requested: int | None, limit: int) -> int:
    """Tokens to generate: ``requested`` lowered to the server's ``limit``, else ``limit``.

    Lowered, never refused: agents ask for far more than they expect (Claude Code 32000,
    opencode 32000), as llama-server allows; the engine also stops where the context
    ends, and the answer then says ``length`` (``ended_by_context``).
    """
    return limit if requested is None else min(requested, limit)


def ended_by_context(final: Delta, max_tokens: int | None) -> bool:
    """Whether the model's context (not the output limit) cut the answer short.

    The engine stops with ``length`` for both; it was the context when fewer tokens than
    the limit were generated (a request may use at most what the context leaves).
    """
    if final.finish_reason != "length" or final.usage is None:
        return False
    return max_tokens is None or final.usage.completion_tokens < max_tokens
