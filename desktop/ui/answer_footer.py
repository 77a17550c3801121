"""The line under an answer (tokens, speed, how it ended), in the window's language.

Shared by the bubbles (``message_widget``) and their tests; window's thread only (it
reads Qt's translators).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.chat.conversation import Turn


def footer_text(turn: Turn) -> str:
    """Token counts and speed under an answer; says when it was stopped or cut short.

    In the language of the window (on its thread only: Qt translators).
    """
    parts: list[str] = []
    if turn.usage is not None:
        parts.append(QCoreApplication.translate("AnswerFooter", "%1 prompt · %2 tokens")
                     .replace("%1", str(turn.usage.prompt_tokens))
                     .replace("%2", str(turn.usage.completion_tokens)))
    if turn.tokens_per_s > 0:
        parts.append(QCoreApplication.translate("AnswerFooter", "%1 tok/s")
                     .replace("%1", f"{turn.tokens_per_s:.1f}"))
    if turn.finish_reason == "cancelled":
        parts.append(QCoreApplication.translate("AnswerFooter", "stopped"))
    elif turn.finish_reason == "length":
        parts.append(QCoreApplication.translate("AnswerFooter", "hit the token limit"))
    elif turn.finish_reason == "error" and turn.error:
        # The reason is in the words of the core (saved with the chat), quoted as said.
        parts.append(QCoreApplication.translate("AnswerFooter", "broken off: %1")
                     .replace("%1", turn.error))
    elif turn.finish_reason == "error":
        parts.append(QCoreApplication.translate("AnswerFooter", "broken off"))
    return " · ".join(parts)
