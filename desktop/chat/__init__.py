"""The conversation core, with no Qt: turns, grounding, citations, saving, one turn run.

The window (``desktop.ui.chat.view``), the terminal chat (``edgedesk chat``) and
``edgedesk ask`` are views over it. See ``session.ChatCore`` for which thread calls what.
"""
