"""A chat's text on the engine's side: templates and the messages they read, the Jinja
sandbox, tool-call parsing, grammars, stop strings and volatile system-prompt lines.
"""
