"""The window's conversations are the core's (``desktop.chat.conversation``).

Kept so modules of the window that other people own import the same names.
"""

from desktop.chat.conversation import DEFAULT_TITLE, Conversation, Turn

__all__ = ["DEFAULT_TITLE", "Conversation", "Turn"]
