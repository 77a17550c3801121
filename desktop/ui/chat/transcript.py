"""The chat transcript: one bubble per turn, made only for turns it does not show yet."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

from desktop.chat import Turn
from desktop.ui.chat.message import MessageWidget
from desktop.ui.common.text_fit import FitLabel


class Transcript(QScrollArea):
    """Scrolling bubbles for a chat's turns; says when one asks to be edited or regenerated.

    Window thread only. Rendering a bubble (Markdown and highlighted code) is the slow
    part, so bubbles still showing the same Turn objects are kept across ``sync`` calls.
    """

    edit_requested = Signal(int)  # the turn's index
    regenerate_requested = Signal()
    version_requested = Signal(int, int)  # the answer's index, the version chosen (0-based)
    unavailable = Signal(str)  # a sentence for the user: a cited file cannot be opened

    def __init__(self, theme: str = "light", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme  # "light" or "dark": the palette answers' code is coloured in
        self.setObjectName("Transcript")
        self.setWidgetResizable(True)
        body = QWidget()
        body.setObjectName("TranscriptBody")
        self._messages = QVBoxLayout(body)
        self._messages.setSpacing(10)
        # What a chat with no message yet shows instead of a blank area (``set_empty_hint``).
        # Plain text (it quotes a model's name), wrapped, never widening the window.
        self.empty_hint = FitLabel()
        self.empty_hint.setObjectName("Muted")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setContentsMargins(24, 48, 24, 0)
        self._messages.addWidget(self.empty_hint)
        self._messages.addStretch(1)
        self.setWidget(body)
        self.bubbles: list[MessageWidget] = []
        self._shown: list[Turn] = []  # the turn each bubble shows, in order
        self._scroll_timer = QTimer(self)  # scroll once the new bubbles have been laid out
        self._scroll_timer.setSingleShot(True)
        self._scroll_timer.setInterval(0)
        self._scroll_timer.timeout.connect(self.scroll_to_end)
        # Bubbles get their heights only as the layout settles, after the timer above: the
        # view keeps following the end while it grows, until the user scrolls elsewhere.
        self._follow = False
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._value_changed)

    def set_empty_hint(self, text: str) -> None:
        """The words shown while the chat has no message yet (what to type, who answers)."""
        self.empty_hint.setText(text)
        self.empty_hint.setToolTip("")  # all of it is in view: no copy on hover

    def _show_empty_hint(self) -> None:
        self.empty_hint.setVisible(not self.bubbles)

    def rebuild(self, turns: Sequence[Turn], *, generating: bool) -> None:
        """Make every bubble afresh (another chat, or another theme)."""
        self._drop(0)
        self.sync(turns, generating=generating)

    def _drop(self, keep: int) -> None:
        for bubble in self.bubbles[keep:]:
            # Not setParent(None): that makes the bubble a top-level window for a moment,
            # which can take the focus (and keyboard shortcuts) away from this window.
            self._messages.removeWidget(bubble)
            bubble.hide()
            bubble.deleteLater()
        del self.bubbles[keep:]
        del self._shown[keep:]

    def sync(self, turns: Sequence[Turn], *, generating: bool) -> None:
        """Bring the bubbles in line with ``turns``, making only new ones.

        Bubbles after the first difference (a new question, a regenerated or edited turn)
        are made again; the rest are kept.
        """
        keep = 0
        for shown, turn in zip(self._shown, turns, strict=False):
            if shown is not turn:
                break
            keep += 1
        if keep == len(self.bubbles) == len(turns):
            self.show_regenerate(generating=generating)
            self._show_empty_hint()
            return
        self._drop(keep)
        for number in range(keep, len(turns)):
            bubble = MessageWidget(number, turns[number], last=False, theme=self.theme)
            bubble.edit_requested.connect(self.edit_requested)
            bubble.regenerate_requested.connect(self.regenerate_requested)
            bubble.version_requested.connect(self.version_requested)
            bubble.citations.unavailable.connect(self.unavailable)
            self._messages.insertWidget(self._messages.count() - 1, bubble)
            self.bubbles.append(bubble)
            self._shown.append(turns[number])
        self.show_regenerate(generating=generating)
        self._show_empty_hint()
        self._scroll_timer.start()

    def show_regenerate(self, *, generating: bool) -> None:
        """Offer Regenerate under the last answer only, and not while one is generated;
        nor flipping an answer's versions then."""
        for number, (bubble, turn) in enumerate(zip(self.bubbles, self._shown, strict=True)):
            last = number == len(self.bubbles) - 1
            bubble.regenerate_button.setVisible(
                last and turn.role == "assistant" and not generating
            )
            bubble.set_versions_enabled(not generating)

    def refresh_last(self) -> None:
        """Show the last bubble's turn as it is now (a streaming or just finished answer)."""
        if self.bubbles:
            self.bubbles[-1].refresh()

    def scroll_to_end(self) -> None:
        """Scroll to the newest message, and stay there while the bubbles are laid out."""
        self._follow = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)

    def _value_changed(self, value: int) -> None:
        self._follow = value == self.verticalScrollBar().maximum()
