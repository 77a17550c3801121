"""What the real-agent tests share: one ``edgedesk serve`` sized for agents' prompts.

Coding agents send 1k–13k-token prompts (system prompt plus tool schemas). The model is
``tiny_agent_model``'s: Gemma 3's tokenizer, chat format and 32k context on a tiny body,
so a 13k-token prompt counts and renders as on Gemma but reads in about a second. Each
slot gets the whole context; answers are kept short (``max_tokens_limit``). Two slots
keep the two biggest prompts (Claude Code's and Codex's) in the KV prefix cache, so the
live clients' turns reuse what the captured requests processed (tests run in file order).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.clients import Serving, edgedesk_serve
from tests.agents.tiny_agent_model import CONTEXT, write_tiny_gemma_vocab

SLOTS = 2
# Tokens per answer (clients ask up to 32000). The tiny model's free answers end within a
# few words almost always, but one of Codex's ran 256 tokens without an end of turn in a
# full run on the Intel machine (Codex then exits 1: "Incomplete response ...
# max_output_tokens"); four times the room makes such a run far less likely.
ANSWER_LIMIT = 1024


def agent_settings(home: Path) -> None:
    """``settings.toml`` for agent-sized prompts and short answers."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        f"[engine]\ncontext_length = {CONTEXT}\nparallel = {SLOTS}\n"
        f"[server]\nmax_tokens_limit = {ANSWER_LIMIT}\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="session")
def agent_model(gemma_path: Path) -> Path:
    """The tiny Gemma-vocabulary model, written once per machine next to Gemma's GGUF."""
    cache = Path(os.environ.get("EDGEDESK_TEST_CACHE", Path.home() / ".cache" / "edgedesk-tests"))
    return write_tiny_gemma_vocab(gemma_path, cache / "tiny-gemma-vocab-v1.gguf")


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory, agent_model: Path) -> Iterator[Serving]:
    """``edgedesk serve --model MODEL`` with a key, as a child process on loopback."""
    home = tmp_path_factory.mktemp("agents-serve")
    agent_settings(home)
    with edgedesk_serve(home, agent_model) as serving:
        yield serving
