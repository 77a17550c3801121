"""The answer being streamed: its turn filled from the worker's signals, painted in batches.

A fast model yields thousands of tokens a second; the transcript repaints the growing
answer on a timer, at most 25 times a second, and less often when laying out a long
Markdown answer gets slow, so the window stays responsive. Window's thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from desktop.chat import Conversation, ToolStep, Turn, cite
from desktop.engine import Delta
from desktop.ui.chat.transcript import Transcript
from desktop.ui.common.workers import StreamDelta

RENDER_INTERVAL_MS = 40  # repaint a streaming answer at most 25 times a second
MAX_RENDER_INTERVAL_MS = 400
WAITING = "…"  # an answer's bubble before the model has read anything
# How long an answer waits before it says how far the model read: a short prompt is read
# in milliseconds, and a "Reading…" line flashing before its words is noise.
READING_SHOWN_AFTER_MS = 500


class StreamingAnswer(QObject):
    """The chat and turn being generated (``current``); its slots take a worker's signals."""

    def __init__(
        self,
        transcript: Transcript,
        shown: Callable[[], Conversation | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._transcript = transcript
        self._shown = shown  # the chat on screen: only its answer is painted
        self.current: tuple[Conversation, Turn] | None = None
        self._dirty = False
        self._waiting = WAITING  # what the answer's bubble shows before its first words
        self._reading: str | None = None  # the progress line, once it may be shown
        self._started = 0.0
        self._reading_timer = QTimer(self)
        self._reading_timer.setSingleShot(True)
        self._reading_timer.timeout.connect(self._show_reading)
        self._timer = QTimer(self)
        self._timer.setInterval(RENDER_INTERVAL_MS)
        self._timer.timeout.connect(self._render)

    def start(self, chat: Conversation, turn: Turn) -> None:
        """``turn`` of ``chat`` is about to be streamed."""
        self.current = (chat, turn)
        self._timer.start(RENDER_INTERVAL_MS)
        self._started = time.perf_counter()
        self._words_came()

    def stop(self) -> None:
        """The answer ended (or the view closes): no more painting."""
        self._timer.stop()
        self._words_came()
        self.current = None
        self._dirty = False
        if self._transcript.bubbles:  # an answer stopped while reading shows no progress
            self._transcript.bubbles[-1].waiting = WAITING

    def on_prepared(self, sources: object) -> None:
        """The numbered sources a grounded answer was given."""
        if self.current is not None and isinstance(sources, list):
            self.current[1].sources = sources

    def on_tool_step(self, step: ToolStep) -> None:
        """A round of tool calls ended: the words shown so far were its own."""
        if self.current is None:
            return
        turn = self.current[1]
        turn.tool_steps.append(step)
        turn.content, turn.reasoning = "", ""
        self._words_came()
        self._dirty = True

    def on_reading(self, done: int, total: int) -> None:
        """The model has read ``done`` of the prompt's ``total`` tokens (no words yet): a
        long conversation on a CPU takes minutes, which "…" alone did not say."""
        if self.current is None:
            return
        self._reading = (
            "*"
            + self.tr("Reading the conversation: %1 of %2 tokens (%3%)…")
            .replace("%1", f"{done:,}")
            .replace("%2", f"{total:,}")
            .replace("%3", str(done * 100 // max(1, total)))
            + "*"
        )
        waited_ms = (time.perf_counter() - self._started) * 1000
        if waited_ms >= READING_SHOWN_AFTER_MS:
            self._show_reading()
        elif not self._reading_timer.isActive():
            self._reading_timer.start(int(READING_SHOWN_AFTER_MS - waited_ms) + 1)

    def _show_reading(self) -> None:
        if self.current is not None and self._reading is not None:
            self._waiting = self._reading
            self._dirty = True

    def _words_came(self) -> None:
        """No progress line (any more): the answer starts, or a round of it does."""
        self._reading_timer.stop()
        self._reading = None
        self._waiting = WAITING

    def on_delta(self, delta: StreamDelta) -> None:
        """Text and reasoning that came since the last delta."""
        if self.current is None:
            return
        turn = self.current[1]
        turn.content += delta.text
        turn.reasoning += delta.reasoning
        self._words_came()  # read: it answers (or thinks) now
        self._dirty = True

    def on_final(self, chunk: Delta) -> None:
        """The answer's statistics and how it ended; citations mapped to their sources."""
        if self.current is None:
            return
        turn = self.current[1]
        turn.usage = chunk.usage
        turn.tokens_per_s = chunk.tokens_per_s
        turn.finish_reason = chunk.finish_reason
        turn.placement = chunk.placement  # where a local model ran, for the footer
        cite(turn)  # [n] in the answer -> the files, pages and lines they point to

    def _render(self) -> None:
        if not self._dirty or self.current is None:
            return
        self._dirty = False
        if self.current[0] is self._shown() and self._transcript.bubbles:
            started = time.perf_counter()
            self._transcript.bubbles[-1].waiting = self._waiting
            self._transcript.refresh_last()
            self._transcript.scroll_to_end()
            # Laying out a long Markdown answer gets slower as it grows; spend at most
            # about a tenth of the time rendering so the window stays responsive.
            cost_ms = (time.perf_counter() - started) * 1000
            self._timer.setInterval(
                int(min(MAX_RENDER_INTERVAL_MS, max(RENDER_INTERVAL_MS, cost_ms * 10)))
            )
