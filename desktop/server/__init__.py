"""The local OpenAI-compatible HTTP API: safe by default, fair under load."""
