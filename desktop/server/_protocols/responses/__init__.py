"""OpenAI's Responses API (``/v1/responses``), with Codex's namespace tools."""
