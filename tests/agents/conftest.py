"""What the real-agent tests share: one ``edgedesk serve`` over Gemma 3 270M, sized for agents.

Coding agents send 1k–13k-token prompts (system prompt plus tool schemas), so each slot
gets Gemma's whole trained context; answers are kept short (``max_tokens_limit``) so a
test waits for prompt processing, not for generation. Two slots keep the two biggest
prompts (Claude Code's and Codex's) in the KV prefix cache, so the live clients' turns
reuse what the captured requests already processed (tests run in file order).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.clients import Serving, edgedesk_serve

CONTEXT = 32768  # Gemma 3 270M's trained context
SLOTS = 2
ANSWER_LIMIT = 64  # tokens per answer (the clients ask for up to 32000); a forced call fits


def agent_settings(home: Path) -> None:
    """``settings.toml`` for agent-sized prompts and short answers."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        f"[engine]\ncontext_length = {CONTEXT}\nparallel = {SLOTS}\n"
        f"[server]\nmax_tokens_limit = {ANSWER_LIMIT}\n", encoding="utf-8")


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory, gemma_path: Path) -> Iterator[Serving]:
    """``edgedesk serve --model GEMMA`` with a key, as a child process on loopback."""
    home = tmp_path_factory.mktemp("agents-serve")
    agent_settings(home)
    with edgedesk_serve(home, gemma_path) as serving:
        yield serving
