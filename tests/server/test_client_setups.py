"""The client setups the docs and the Server screen show are the same, with the real address."""

from __future__ import annotations

from pathlib import Path

from desktop.server._client_setups import setups, with_context

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_docs_show_every_setup_verbatim_for_the_default_address() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name, setup in setups("http://127.0.0.1:8765/v1").items():
        if name != "Python (openai)":  # the docs have their own, longer Python example
            assert setup in text, name


def test_protocol_roots_and_base_urls_follow_the_address() -> None:
    shown = setups("http://[::1]:9000/v1")
    assert 'base_url = "http://[::1]:9000/v1"' in shown["Codex CLI"]
    assert 'wire_api = "responses"' in shown["Codex CLI"]
    # Anthropic's and Ollama's clients add /v1/messages and /api/... themselves.
    assert "ANTHROPIC_BASE_URL=http://[::1]:9000\n" in shown["Claude Code"]
    assert (
        '"github.copilot.chat.byok.ollamaEndpoint": "http://[::1]:9000"' in shown["VS Code Copilot"]
    )
    assert "apiBase: http://[::1]:9000\n" in shown["Continue"]


def test_claude_code_is_told_the_models_context_to_compact_before_it_fills() -> None:
    shown = setups("http://127.0.0.1:8765/v1")["Claude Code"]
    assert "export CLAUDE_CODE_AUTO_COMPACT_WINDOW=MODEL-CONTEXT " in shown
    filled = with_context(shown, 32768)
    assert "export CLAUDE_CODE_AUTO_COMPACT_WINDOW=32768 " in filled
    assert "MODEL-CONTEXT" not in filled
    assert with_context(shown, None) == shown


def test_codex_waits_for_a_long_prompt_instead_of_dropping_the_stream() -> None:
    import tomllib

    shown = setups("http://127.0.0.1:8765/v1")["Codex CLI"]
    config = tomllib.loads(shown.split("# then, in the shell")[0])
    provider = config["model_providers"][config["model_provider"]]
    # Codex drops a stream after 5 minutes without an event and retries it; a local
    # model can read a 20k-token prompt for longer than that.
    assert provider["stream_idle_timeout_ms"] >= 30 * 60 * 1000
