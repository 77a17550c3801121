"""The four wire protocols, one folder each: openai, anthropic, responses, ollama.

Each has its typed request bodies (``requests``; ``schemas`` for OpenAI), ``translate``
(pure translation of a request into the engine's plain values), its answers (``events``,
``output``, ``replies``: pure translation of the engine's answer) and ``routes`` (the
FastAPI endpoints, which hand every request to the one pipeline in
``desktop.server._generation``). No protocol imports another (an import-linter contract).
"""
