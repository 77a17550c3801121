"""Answers grounded in a document collection: the prompt with numbered sources, and the
clickable citations under the answer.

Retrieval embeds the question, so it runs on the generation worker's thread (``prepare``)
before the first token; the window only maps ``[n]`` back to files once the answer ends.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from desktop.engine.types import Message
from desktop.store.sources import Source
from desktop.ui.conversations import Turn
from desktop.ui.rich_text import literal_tooltip

if TYPE_CHECKING:
    from desktop.retrieval.answer import Citation
    from desktop.retrieval.search import Hit

SOURCES_K = 5
Search = Callable[[str, Sequence[str]], "list[Hit]"]  # question, collections -> best chunks


def grounded_messages(messages: Sequence[Message], hits: Sequence[Hit]) -> list[Message]:
    """The chat with the numbered sources in front; the user's own system prompt is kept."""
    from desktop.retrieval.answer import build_messages

    question = messages[-1].content if messages else ""
    sources_prompt = build_messages(question, hits)[0].content
    own = [m.content for m in messages if m.role == "system" and m.content.strip()]
    system = "\n\n".join([*own, sources_prompt])
    return [Message("system", system), *(m for m in messages if m.role != "system")]


def preparer(search: Search, collection: str, messages: Sequence[Message],
             given: list[Any] | None = None) -> Callable[[], tuple[list[Message], object]]:
    """A call for the worker thread: retrieve for the last question, build the prompt.

    The hits are also put in ``given``, for the saver that runs later on the same thread
    (the window's copy arrives by a queued signal, possibly after the answer is saved).
    """
    def prepare() -> tuple[list[Message], object]:
        question = messages[-1].content if messages else ""
        hits = search(question, [collection])
        if given is not None:
            given[:] = hits
        return grounded_messages(messages, hits), hits
    return prepare


def cite(turn: Turn) -> None:
    """Fill ``turn.citations`` from the ``[n]`` in its answer (all sources if none cited)."""
    if not turn.sources:
        turn.citations = []
        return
    from desktop.retrieval.answer import Citation, citations

    cited = citations(turn.content, turn.sources)
    turn.citations = cited or [
        Citation(n, h.path, h.page, h.line_start, h.line_end, h.text)
        for n, h in enumerate(turn.sources, start=1)]


def stored_sources(turn: Turn) -> tuple[Source, ...]:
    """The turn's sources as the store keeps them, each marked whether the answer cites it.

    ``turn.sources`` holds retrieval Hits while a chat is open, or the store's Sources
    once it was read back; both have the path, page, lines and text needed here.
    """
    if not turn.sources:
        return ()
    from desktop.retrieval.answer import citations

    cited = {c.number for c in citations(turn.content, turn.sources)}
    return tuple(Source(n, s.path, s.page, s.line_start, s.line_end, s.text, n in cited)
                 for n, s in enumerate(turn.sources, start=1))


def was_cited(turn: Turn) -> bool:
    """Whether the answer itself cites the sources shown (else they were only given)."""
    from desktop.retrieval.answer import citations

    return bool(turn.sources) and bool(citations(turn.content, turn.sources))


def is_local_file(path: str) -> bool:
    """Whether ``path`` names an existing regular file on this computer (no network share)."""
    # Checked as text first: merely looking at \\host\share on Windows connects to the host
    # and sends the user's credentials, and cited paths can come from an imported chat.
    if path[:2] in {"\\\\", "//", "\\/", "/\\"}:
        return False
    return os.path.isabs(path) and os.path.isfile(path)  # False, not an error, for odd names


def open_source(path: str) -> bool:
    """Open a cited file in the desktop's viewer; opens nothing (False) unless is_local_file."""
    if not is_local_file(path):
        return False
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


class CitationRow(QWidget):
    """``[1] notes.pdf`` buttons under an answer; a click opens the file, the tooltip says
    the page and lines."""

    opened = Signal(str)  # the path opened
    unavailable = Signal(str)  # a sentence for the user: the cited file cannot be opened

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("Footer")
        self._row.addWidget(self.label)
        self._row.addStretch(1)
        self.buttons: list[QToolButton] = []

    def show_citations(self, items: Sequence[Citation], *, cited: bool) -> None:
        """One button per citation (hidden when there are none)."""
        for button in self.buttons:
            self._row.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        self.setVisible(bool(items))
        self.label.setText(self.tr("Sources:") if cited
                           else self.tr("Sources given (none cited):"))
        for item in items:
            button = QToolButton()
            button.setObjectName("Small")
            button.setText(f"[{item.number}] {Path(item.path).name}")
            snippet = " ".join(item.text.split())
            # The path and snippet come from documents (or an imported chat): shown as text.
            button.setToolTip(literal_tooltip(f"{item.location}\n\n{snippet[:300]}"))
            button.setAccessibleName(self.tr("Open source ") + str(item.number))
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(self._open_handler(item.path))
            self._row.insertWidget(self._row.count() - 1, button)
            self.buttons.append(button)

    def _open_handler(self, path: str) -> Callable[[], Any]:
        def handler() -> None:
            # Runs on the window's thread: a button's clicked is a direct connection.
            if open_source(path):
                self.opened.emit(path)
            elif not is_local_file(path):
                self.unavailable.emit(self.tr(
                    "The cited file is not on this computer any more: %1").replace("%1", path))
        return handler
