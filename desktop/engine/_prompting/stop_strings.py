"""Token bytes to text on the request's thread: UTF-8 across tokens, and stop strings.

A character can be split across tokens, and a stop string across pieces, so both are
held back until the next piece decides them; nothing of a stop string ever reaches the
caller.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence


class TextAssembler:
    """Turns token pieces into text that is safe to show; owned by one request thread."""

    def __init__(self, stops: Sequence[str]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stops = tuple(s for s in stops if s)
        self._held = ""
        self.stopped = False  # a stop string was found; the answer ends here
        self.matched: str | None = None  # which one (the earliest in the text)

    def feed(self, piece: bytes) -> str:
        """Consume one token's bytes; return the text that is now certain."""
        if self.stopped:
            return ""
        text = self._held + self._decoder.decode(piece)
        if not self._stops:
            self._held = ""
            return text
        cut = -1
        for stop in self._stops:
            i = text.find(stop)
            if i >= 0 and (cut < 0 or i < cut):
                cut, self.matched = i, stop
        if cut >= 0:
            self.stopped = True
            self._held = ""
            return text[:cut]
        keep = 0
        for stop in self._stops:
            keep = max(keep, _partial_suffix(text, stop))
        self._held = text[len(text) - keep :]
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What is still held back, at the end of a stream that did not hit a stop string."""
        if self.stopped:
            return ""
        text = self._held + self._decoder.decode(b"", final=True)
        self._held = ""
        return text


def _partial_suffix(text: str, stop: str) -> int:
    """Length of the longest end of ``text`` that begins ``stop``.

    Runs once per token per stop string: only places where ``stop``'s first character
    occurs near the end are compared (one C-level find), not every suffix length.
    """
    start = max(0, len(text) - len(stop) + 1)
    i = text.find(stop[0], start)
    while i >= 0:
        if stop.startswith(text[i:]):
            return len(text) - i
        i = text.find(stop[0], i + 1)
    return 0
