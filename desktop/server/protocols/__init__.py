"""The four wire protocols, one folder each: openai, anthropic, responses,
ollama.

Each has wire (pure request translation into the engine's plain values), its
events or output (pure answer translation) and routes (the FastAPI endpoints, which
hand every request to the one pipeline in desktop.server.generation).
"""
