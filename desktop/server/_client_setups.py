"""Ready-to-paste setups for the IDE and agent tools that speak to the local server.

One source for ``docs/api.md`` and the window's Server screen, so both show the same
text with the real address (and a key placeholder: keys are shown only once, at
creation). Pure string building; no Qt.
"""

from __future__ import annotations

KEY = "YOUR-EDGEDESK-KEY"
MODEL = "MODEL-ID"
CONTEXT = "MODEL-CONTEXT"  # the model's context in tokens (its x-edgedesk-context header)


def _root(url: str) -> str:
    """The server root (``…/v1`` stripped): Anthropic and Ollama clients add their paths."""
    return url.rstrip("/").removesuffix("/v1")


def python_openai(url: str) -> str:
    """The ``openai`` Python client."""
    return (
        "from openai import OpenAI\n\n"
        f'client = OpenAI(base_url="{url}", api_key="{KEY}")\n'
        "reply = client.chat.completions.create(\n"
        f'    model="{MODEL}",\n'
        '    messages=[{"role": "user", "content": "Hello"}],\n'
        "    max_tokens=512,  # without a limit a model may write thousands of tokens\n"
        ")\nprint(reply.choices[0].message.content)\n"
    )


def curl(url: str) -> str:
    """A plain HTTP request from a shell (``curl``), no client library needed."""
    return (
        f"curl {url}/chat/completions \\\n"
        f'  -H "Authorization: Bearer {KEY}" \\\n'
        '  -H "Content-Type: application/json" \\\n'
        f'  -d \'{{"model": "{MODEL}", "max_tokens": 512,\n'
        '       "messages": [{"role": "user", "content": "Hello"}]}\'\n'
    )


def codex_cli(url: str) -> str:
    """Codex CLI (Responses API only): a provider in ``~/.codex/config.toml``.

    ``tests/agents/test_real_agents.py`` runs ``codex exec`` with exactly this file.
    """
    return (
        "# ~/.codex/config.toml\n"
        f'model = "{MODEL}"\n'
        'model_provider = "edgedesk"\n\n'
        "[model_providers.edgedesk]\n"
        'name = "EdgeDesk"\n'
        f'base_url = "{url}"\n'
        'wire_api = "responses"\n'
        'env_key = "EDGEDESK_API_KEY"\n'
        "# a local model may read a long prompt for minutes before its first word;\n"
        "# Codex's default (5 min without an event) would drop and retry the request\n"
        "stream_idle_timeout_ms = 1800000\n\n"
        f"# then, in the shell: export EDGEDESK_API_KEY={KEY}\n"
    )


def claude_code(url: str) -> str:
    """Claude Code (Anthropic Messages API): environment variables.

    Claude Code assumes a 200k-token window and compacts the conversation only near it;
    ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` set to the local model's context makes it compact
    before a prompt overflows (``with_context`` fills it in).
    ``tests/agents/test_real_agents.py`` runs Claude Code with exactly these.
    """
    return (
        f"export ANTHROPIC_BASE_URL={_root(url)}\n"
        f"export ANTHROPIC_AUTH_TOKEN={KEY}\n"
        f"export ANTHROPIC_MODEL={MODEL}\n"
        f"export ANTHROPIC_DEFAULT_HAIKU_MODEL={MODEL}\n"
        f"export CLAUDE_CODE_AUTO_COMPACT_WINDOW={CONTEXT}  # compact before the context fills\n"
        "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1  # no update checks, no telemetry\n"
        "claude\n"
    )


def continue_dev(url: str) -> str:
    """Continue: chat over the OpenAI API, autocomplete (FIM) over Ollama's."""
    return (
        "# ~/.continue/config.yaml\n"
        "name: EdgeDesk\n"
        "version: 0.0.1\n"
        "schema: v1\n"
        "models:\n"
        "  - name: EdgeDesk chat\n"
        "    provider: openai\n"
        f"    model: {MODEL}\n"
        f"    apiBase: {url}\n"
        f"    apiKey: {KEY}\n"
        "    roles: [chat, edit, apply]\n"
        "  - name: EdgeDesk autocomplete\n"
        "    provider: ollama\n"
        "    model: CODE-MODEL-ID\n"
        f"    apiBase: {_root(url)}\n"
        "    requestOptions:\n"
        "      headers:\n"
        f"        Authorization: Bearer {KEY}\n"
        "    roles: [autocomplete]\n"
    )


def zed(url: str) -> str:
    """Zed: an OpenAI-compatible provider (the key goes into the Agent panel's settings)."""
    return (
        "// ~/.config/zed/settings.json\n"
        '"language_models": {\n'
        '  "openai_compatible": {\n'
        '    "EdgeDesk": {\n'
        f'      "api_url": "{url}",\n'
        f'      "available_models": [{{"name": "{MODEL}", "max_tokens": 8192}}]\n'
        "    }\n"
        "  }\n"
        "}\n"
        f"// Agent panel > Settings > EdgeDesk: API key {KEY}\n"
    )


def vscode_copilot(url: str) -> str:
    """VS Code Copilot's local models: its Ollama provider (it sends no key)."""
    return (
        "// settings.json (Copilot Chat > Manage Models > Ollama)\n"
        f'"github.copilot.chat.byok.ollamaEndpoint": "{_root(url)}"\n'
        "// Copilot sends no API key: serve without one, on loopback only:\n"
        "//   edgedesk serve --no-auth --model MODEL\n"
    )


def jetbrains(url: str) -> str:
    """JetBrains AI Assistant: a third-party OpenAI-compatible (or Ollama) provider."""
    return (
        "Settings > Tools > AI Assistant > Models > Third-party AI providers\n"
        f"  Provider: OpenAI-compatible   URL: {url}   API key: {KEY}\n"
        f"  (or Provider: Ollama   URL: {_root(url)}   with 'edgedesk serve --no-auth')\n"
    )


def documents_mcp(url: str) -> str:
    """The indexed documents as MCP tools for Claude Code, Codex and Continue."""
    return (
        "# Claude Code: over stdio, or over HTTP with a key\n"
        "claude mcp add edgedesk -- edgedesk mcp serve\n"
        f"claude mcp add --transport http edgedesk-http {_root(url)}/mcp "
        f'--header "Authorization: Bearer {KEY}"\n\n'
        "# Codex: ~/.codex/config.toml\n"
        "[mcp_servers.edgedesk]\n"
        'command = "edgedesk"\n'
        'args = ["mcp", "serve"]\n\n'
        "# Continue: ~/.continue/config.yaml\n"
        "mcpServers:\n"
        "  - name: EdgeDesk documents\n"
        "    command: edgedesk\n"
        "    args: [mcp, serve]\n"
    )


SETUPS = {
    "Python (openai)": python_openai,
    "curl": curl,
    "Codex CLI": codex_cli,
    "Claude Code": claude_code,
    "Continue": continue_dev,
    "Zed": zed,
    "VS Code Copilot": vscode_copilot,
    "JetBrains AI Assistant": jetbrains,
    "Documents over MCP": documents_mcp,
}


def with_context(text: str, tokens: int | None) -> str:
    """``text`` with the model's context (``tokens``) where it says MODEL-CONTEXT (kept as
    is when it is not known)."""
    return text if not tokens else text.replace(CONTEXT, str(tokens))


def setups(url: str) -> dict[str, str]:
    """Every client's setup for the server at ``url`` (the ``…/v1`` base URL), by name."""
    return {name: make(url) for name, make in SETUPS.items()}
