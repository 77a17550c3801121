"""A transcript made afresh (another chat opened, the theme changed) shows its newest message."""

from __future__ import annotations

import pytest

from desktop.chat import Turn
from desktop.ui.chat.transcript import Transcript

pytestmark = pytest.mark.qt

LONG = " ".join(["What is the capital of France? Paris, the capital of France."] * 30)


def _turns(n: int) -> list[Turn]:
    return [Turn("user" if i % 2 == 0 else "assistant", f"{i}: {LONG}") for i in range(n)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_rebuilt_transcript_ends_at_the_newest_message(qtbot, theme: str) -> None:
    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.resize(800, 400)
    transcript.show()
    qtbot.waitExposed(transcript)
    turns = _turns(6)
    transcript.sync(turns, generating=False)
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    # The theme changes (Settings): every bubble is made again; the view must not jump
    # to the top of the chat, leaving the newest answer's end out of sight.
    transcript.theme = theme
    transcript.rebuild(turns, generating=False)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    last = transcript.bubbles[-1]
    qtbot.waitUntil(
        lambda: (
            last.mapTo(transcript.viewport(), last.rect().bottomLeft()).y()
            <= transcript.viewport().height()
        )
    )


def test_a_reader_who_scrolled_up_is_not_pulled_back_down(qtbot) -> None:
    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.resize(800, 400)
    transcript.show()
    qtbot.waitExposed(transcript)
    transcript.sync(_turns(6), generating=False)
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    bar.setValue(0)  # the user scrolls back to the first question
    before = bar.maximum()
    transcript.resize(600, 400)  # the text wraps again: the range changes
    qtbot.waitUntil(lambda: bar.maximum() != before)
    assert bar.value() == 0
