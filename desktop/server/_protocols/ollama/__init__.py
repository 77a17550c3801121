"""Ollama's ``/api/*``: tags, show, chat, generate, embed, version, ps."""
