"""One message in the transcript: Markdown body, collapsible reasoning, stats and actions."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.ui.conversations import Turn
from desktop.ui.grounding import CitationRow, was_cited
from desktop.ui.look import icon

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def code_blocks(markdown: str) -> list[str]:
    """The contents of the fenced code blocks in ``markdown`` (an open fence counts)."""
    return [block.rstrip("\n") for block in _FENCE.findall(markdown)]


def footer_text(turn: Turn) -> str:
    """Token counts and speed under an answer; says when it was stopped or cut short."""
    parts: list[str] = []
    if turn.usage is not None:
        parts.append(f"{turn.usage.prompt_tokens} prompt · {turn.usage.completion_tokens} tokens")
    if turn.tokens_per_s > 0:
        parts.append(f"{turn.tokens_per_s:.1f} tok/s")
    if turn.finish_reason == "cancelled":
        parts.append("stopped")
    elif turn.finish_reason == "length":
        parts.append("hit the token limit")
    return " · ".join(parts)


class MessageWidget(QFrame):
    """A user or assistant bubble; emits ``edit_requested``/``regenerate_requested``."""

    edit_requested = Signal(int)
    regenerate_requested = Signal()

    def __init__(self, index: int, turn: Turn, *, last: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index = index
        self._turn = turn
        is_user = turn.role == "user"
        self.setObjectName("UserBubble" if is_user else "AssistantBubble")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 8)
        layout.setSpacing(4)
        role = QLabel(self.tr("You") if is_user else self.tr("Assistant"))
        role.setObjectName("RoleLabel")
        layout.addWidget(role)

        self.reasoning_toggle = QToolButton()
        self.reasoning_toggle.setObjectName("Small")
        self.reasoning_toggle.setCheckable(True)
        self.reasoning_toggle.setText(self.tr("▸ Reasoning"))
        self.reasoning_toggle.setAccessibleName(self.tr("Show reasoning"))
        self.reasoning = QLabel()
        self.reasoning.setObjectName("Reasoning")
        self.reasoning.setWordWrap(True)
        self.reasoning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasoning.setVisible(False)
        self.reasoning_toggle.toggled.connect(self._toggle_reasoning)
        layout.addWidget(self.reasoning_toggle)
        layout.addWidget(self.reasoning)

        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.MarkdownText)
        self.body.setWordWrap(True)
        self.body.setOpenExternalLinks(False)  # nothing in a chat may reach the network
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.body.setAccessibleName(self.tr("Message text"))
        layout.addWidget(self.body)
        self.citations = CitationRow()
        self.citations.setVisible(False)
        self._shown_citations: list[object] = []
        layout.addWidget(self.citations)

        row = QHBoxLayout()
        self.footer = QLabel()
        self.footer.setObjectName("Footer")
        row.addWidget(self.footer, 1)
        self.copy_button = self._action(row, "copy", self.tr("Copy message"), self._copy)
        self.copy_code_button = self._action(row, "copy", self.tr("Copy code"), self._copy_code)
        self.copy_code_button.setText(self.tr("code"))
        self.copy_code_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.edit_button = self._action(row, "edit", self.tr("Edit and resend"),
                                        lambda: self.edit_requested.emit(self.index))
        self.regenerate_button = self._action(row, "regenerate", self.tr("Regenerate"),
                                              self.regenerate_requested.emit)
        self.edit_button.setVisible(is_user)
        self.regenerate_button.setVisible(not is_user and last)
        layout.addLayout(row)
        self.refresh()

    def _action(self, row: QHBoxLayout, name: str, label: str,
                slot: Callable[[], object]) -> QToolButton:
        button = QToolButton()
        button.setObjectName("Small")
        button.setIcon(icon(name))
        button.setToolTip(label)
        button.setAccessibleName(label)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    def _toggle_reasoning(self, shown: bool) -> None:
        self.reasoning.setVisible(shown)
        self.reasoning_toggle.setText(self.tr("▾ Reasoning") if shown else self.tr("▸ Reasoning"))

    def refresh(self) -> None:
        """Re-render from the turn (called while it streams, throttled by the view)."""
        turn = self._turn
        self.body.setText(turn.content or ("…" if turn.role == "assistant" else ""))
        self.reasoning.setText(turn.reasoning)
        self.reasoning_toggle.setVisible(bool(turn.reasoning))
        self.footer.setText(footer_text(turn))
        self.copy_code_button.setVisible(bool(code_blocks(turn.content)))
        if turn.citations != self._shown_citations:
            self._shown_citations = list(turn.citations)
            self.citations.show_citations(turn.citations, cited=was_cited(turn))

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self._turn.content)

    def _copy_code(self) -> None:
        QGuiApplication.clipboard().setText("\n\n".join(code_blocks(self._turn.content)))
