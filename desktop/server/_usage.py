"""A finished request as a usage row: the client named from its User-Agent, no content.

``client_of`` turns a User-Agent into a short client name (Codex, Claude Code, opencode,
Continue, curl, openai-python…); ``usage_row`` builds the row the guard hands to the
recorder once a response is over. Both are pure.
"""

from __future__ import annotations

import re
import time

from desktop.server._services import RequestInfo
from desktop.store import UsageRow

# Checked in order against the lower-cased User-Agent; the first match names the client.
# Agents built on an SDK put their own name first (``opencode/1.18 ai-sdk/...``), so the
# agents come before the SDKs.
_CLIENTS: tuple[tuple[str, str], ...] = (
    ("codex", "Codex"),
    ("claude-cli", "Claude Code"),
    ("claude-code", "Claude Code"),
    ("opencode", "opencode"),
    ("continue", "Continue"),
    # Continue's CLI (cn 1.5) sends this, as captured in tests/fixtures/agent_requests.
    ("ls/js", "Continue"),
    ("cline", "Cline"),
    ("aider", "aider"),
    ("zed", "Zed"),
    ("githubcopilot", "Copilot"),
    ("copilot", "Copilot"),
    ("jetbrains", "JetBrains"),
    ("edgedesk", "EdgeDesk"),
    ("ollama", "ollama"),
    ("openai/python", "openai-python"),
    ("openai/js", "openai-js"),
    ("anthropic/python", "anthropic-python"),
    ("anthropic/js", "anthropic-js"),
    ("curl/", "curl"),
    ("wget/", "wget"),
    ("python-httpx", "httpx"),
    ("python-requests", "requests"),
    ("aiohttp", "aiohttp"),
    ("node-fetch", "node"),
    ("node", "node"),
    ("go-http-client", "go"),
    ("mozilla/", "browser"),
)
_TOKEN = re.compile(r"[A-Za-z0-9._\-]{1,32}")


def client_of(user_agent: str | None) -> str:
    """A short name of the program behind ``user_agent`` ("unknown" when none is sent)."""
    text = (user_agent or "").strip()
    if not text:
        return "unknown"
    lowered = text.lower()
    for needle, name in _CLIENTS:
        if needle in lowered:
            return name
    # Another program: the first word of its product token, never the whole header.
    first = _TOKEN.match(text.split("/", 1)[0].strip())
    return first.group(0) if first else "other"


def usage_row(
    info: RequestInfo,
    route: str,
    status: int,
    latency_s: float,
    user_agent: str | None,
    *,
    now: float | None = None,
) -> UsageRow:
    """The usage row of one finished request (its counts and times, never its content)."""
    return UsageRow(
        time=time.time() if now is None else now,
        key_name=info.key_name,
        client=client_of(user_agent),
        model=info.model,
        route=route,
        status=status,
        error_code=info.error_code or ("stream_failed" if info.error else None),
        prompt_tokens=info.tokens_in,
        cached_tokens=info.tokens_cached,
        completion_tokens=info.tokens_out,
        ttft_ms=None if info.ttft_s is None else round(info.ttft_s * 1000, 2),
        total_ms=round(latency_s * 1000, 2),
    )
