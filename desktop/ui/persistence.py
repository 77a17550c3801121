"""The window saves chats with the core's saver (``desktop.chat.persistence``).

Kept so modules of the window that other people own import the same name.
"""

from desktop.chat.persistence import ChatSaver

__all__ = ["ChatSaver"]
