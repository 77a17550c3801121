"""The line under an answer (tokens, speed, where it ran, how it ended), in the
window's language.

Only what is saved with the answer is shown, so an answer reopened after a restart reads
exactly as it did when new (where a local model ran is saved with the answer's timings).
Shared by the bubbles (``message``) and their tests; window's thread only (it reads Qt's
translators).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.chat import Turn
from desktop.ui.common.core_text import placement_text

MIN_TOKENS_FOR_SPEED = 4  # fewer tokens: no speed is shown under the answer


def footer_text(turn: Turn) -> str:
    """Token counts, speed and where the model ran under an answer; says when it was
    stopped or cut short.

    In the language of the window (on its thread only: Qt translators).
    """
    parts: list[str] = []
    made = turn.usage.completion_tokens if turn.usage is not None else 0
    if turn.usage is not None:
        words = (
            QCoreApplication.translate("AnswerFooter", "%1 prompt · 1 token")
            if made == 1
            else QCoreApplication.translate("AnswerFooter", "%1 prompt · %2 tokens")
        )
        parts.append(words.replace("%1", str(turn.usage.prompt_tokens)).replace("%2", str(made)))
    # A speed over a token or three (an answer stopped at once) is the time of one
    # sampling step, not of writing: thousands of tok/s that the model never reaches.
    if turn.tokens_per_s > 0 and made >= MIN_TOKENS_FOR_SPEED:
        parts.append(
            QCoreApplication.translate("AnswerFooter", "%1 tok/s").replace(
                "%1", f"{turn.tokens_per_s:.1f}"
            )
        )
    if turn.placement is not None:
        parts.append(placement_text(turn.placement))
    if turn.finish_reason == "cancelled":
        parts.append(QCoreApplication.translate("AnswerFooter", "stopped"))
    elif turn.finish_reason == "length":
        parts.append(QCoreApplication.translate("AnswerFooter", "hit the token limit"))
    elif turn.finish_reason == "error" and turn.error:
        # The reason is in the words of the core (saved with the chat), quoted as said.
        parts.append(
            QCoreApplication.translate("AnswerFooter", "broken off: %1").replace("%1", turn.error)
        )
    elif turn.finish_reason == "error":
        parts.append(QCoreApplication.translate("AnswerFooter", "broken off"))
    return " · ".join(parts)
