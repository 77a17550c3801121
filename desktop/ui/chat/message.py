"""One message in the transcript: Markdown body, collapsible reasoning, stats and actions."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.chat import Turn, was_cited
from desktop.ui.chat.answer_footer import footer_text
from desktop.ui.chat.attach import AttachmentRow
from desktop.ui.chat.citations import CitationRow
from desktop.ui.common.clipboard import copy_text
from desktop.ui.common.look import icon
from desktop.ui.common.markdown_render import COPY_SCHEME, MarkdownRenderer, code_blocks
from desktop.ui.common.rich_text import RichTextPart
from desktop.ui.common.text_fit import FitLabel

__all__ = ["MessageWidget", "code_blocks", "footer_text"]


class MessageWidget(QFrame):
    """A user or assistant bubble; emits ``edit_requested``/``regenerate_requested``."""

    edit_requested = Signal(int)
    regenerate_requested = Signal()
    version_requested = Signal(int, int)  # the turn's index, the version's (0-based)

    def __init__(
        self,
        index: int,
        turn: Turn,
        *,
        last: bool,
        theme: str = "light",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.index = index
        self._turn = turn
        # One renderer per bubble: it keeps the highlighted HTML of this answer's code blocks.
        self._renderer = MarkdownRenderer(theme, copy_label=self.tr("Copy"))
        self.shown_markdown: str | None = None  # the source of what the body shows now
        # What an answer without words yet shows (Markdown): how far the model has read.
        self.waiting = "…"
        self._visible_parts = 0
        is_user = turn.role == "user"
        self.setObjectName("UserBubble" if is_user else "AssistantBubble")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 8)
        layout.setSpacing(4)
        role = QLabel(self.tr("You") if is_user else self.tr("Assistant"))
        role.setObjectName("RoleLabel")
        layout.addWidget(role)

        self._build_reasoning(layout)
        self._build_tools(layout)

        # A question's pictures (thumbnails) and documents (names), above its words.
        self.attachments = AttachmentRow.added_to(layout, turn.attachments)
        self.body = self._build_body()
        layout.addWidget(self.body)
        self.citations = CitationRow()
        self.citations.setVisible(False)
        self._shown_citations: list[object] = []
        layout.addWidget(self.citations)

        row = QHBoxLayout()
        self._build_versions(row)
        # Wrapped, never setting the width: a long "broken off: <error>" made the
        # transcript 2,300 px wide (a sideways scroll bar, every bubble cut on the right).
        self.footer = FitLabel()
        self.footer.setObjectName("Footer")
        row.addWidget(self.footer, 1)
        self.copy_button = self._action(row, "copy", self.tr("Copy message"), self._copy)
        self.copy_code_button = self._action(row, "copy", self.tr("Copy code"), self._copy_code)
        self.copy_code_button.setText(self.tr("code"))
        self.copy_code_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.edit_button = self._action(
            row, "edit", self.tr("Edit and resend"), lambda: self.edit_requested.emit(self.index)
        )
        self.regenerate_button = self._action(
            row, "regenerate", self.tr("Regenerate"), self.regenerate_requested.emit
        )
        self.edit_button.setVisible(is_user)
        self.regenerate_button.setVisible(not is_user and last)
        layout.addLayout(row)
        self.refresh()

    def _build_reasoning(self, layout: QVBoxLayout) -> None:
        # The model's thinking, folded away under a toggle.
        self.reasoning_toggle = QToolButton()
        self.reasoning_toggle.setObjectName("Small")
        self.reasoning_toggle.setCheckable(True)
        self.reasoning_toggle.setText(self.tr("▸ Reasoning"))
        self.reasoning_toggle.setAccessibleName(self.tr("Show reasoning"))
        self.reasoning = QLabel()
        self.reasoning.setObjectName("Reasoning")
        self.reasoning.setWordWrap(True)
        self.reasoning.setTextFormat(Qt.TextFormat.PlainText)  # the model's words, never HTML
        self.reasoning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasoning.setVisible(False)
        self.reasoning_toggle.toggled.connect(self._toggle_reasoning)
        layout.addWidget(self.reasoning_toggle)
        layout.addWidget(self.reasoning)

    def _build_versions(self, row: QHBoxLayout) -> None:
        # ‹ 2/3 ›: a regenerated answer's versions, to flip back to an earlier one.
        turn = self._turn
        self.previous_version = self._action(
            row, "", self.tr("Previous version"), lambda: self._flip(-1)
        )
        self.previous_version.setText("‹")
        self.version_label = QLabel(f"{turn.version + 1}/{turn.version_count}")
        self.version_label.setObjectName("Footer")
        self.version_label.setAccessibleName(
            self.tr("Version %1 of %2")
            .replace("%1", str(turn.version + 1))
            .replace("%2", str(turn.version_count))
        )
        row.addWidget(self.version_label)
        self.next_version = self._action(row, "", self.tr("Next version"), lambda: self._flip(1))
        self.next_version.setText("›")
        self.set_versions_enabled(True)

    def set_versions_enabled(self, enabled: bool) -> None:
        """Offer ‹ › for an answer with versions (not while an answer is generated)."""
        turn = self._turn
        shown = turn.version_count > 1
        for widget in (self.previous_version, self.version_label, self.next_version):
            widget.setVisible(shown)
        self.previous_version.setEnabled(enabled and turn.version > 0)
        self.next_version.setEnabled(enabled and turn.version < turn.version_count - 1)

    def _flip(self, step: int) -> None:
        number = self._turn.version + step
        if 0 <= number < self._turn.version_count:
            self.version_requested.emit(self.index, number)

    def _build_tools(self, layout: QVBoxLayout) -> None:
        # The answer's tool calls, collapsed: one line each, the result under it when open.
        self.tools_toggle = QToolButton()
        self.tools_toggle.setObjectName("Small")
        self.tools_toggle.setCheckable(True)
        self.tools_toggle.setVisible(False)
        self.tools = QLabel()
        self.tools.setObjectName("Reasoning")
        self.tools.setWordWrap(True)
        self.tools.setTextFormat(Qt.TextFormat.PlainText)  # tools' words, never HTML
        self.tools.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tools.setVisible(False)
        self.tools_toggle.toggled.connect(self._toggle_tools)
        layout.addWidget(self.tools_toggle)
        layout.addWidget(self.tools)

    def _build_body(self) -> QWidget:
        # A column of labels, one per top-level code block and per stretch of prose between
        # them: while an answer streams only the growing one is laid out again.
        body = QWidget()
        body.setObjectName("MessageBody")
        # The bubble's colour shows through: the themes paint bare widgets the window colour,
        # which would show between and around the parts' rounded labels.
        body.setStyleSheet(
            "#MessageBody, #MessageBody QTextBrowser { background: transparent; border: none; }"
        )
        body.setAccessibleName(self.tr("Message text"))
        self._parts_layout = QVBoxLayout(body)
        self._parts_layout.setContentsMargins(0, 0, 0, 0)
        self._parts_layout.setSpacing(0)
        self.parts: list[RichTextPart] = []
        self._shown_parts: list[str] = []
        return body

    def _new_part(self) -> RichTextPart:
        part = RichTextPart()  # HTML from markdown_render, never the model's raw text
        part.linkActivated.connect(self._link)
        part.setAccessibleName(self.tr("Message text"))
        self._parts_layout.addWidget(part)
        self.parts.append(part)
        self._shown_parts.append("")
        return part

    def body_html(self) -> str:
        """The rich text the body shows now, all parts together."""
        return "".join(self._shown_parts[: self._visible_parts])

    def _show(self, markdown: str) -> None:
        html = self._renderer.render_parts(markdown)
        while len(self.parts) < len(html):
            self._new_part()
        for number, part in enumerate(self.parts):
            text = html[number] if number < len(html) else ""
            if text != self._shown_parts[number]:  # finished parts keep their layout
                part.setText(text)
                self._shown_parts[number] = text
            part.setVisible(number < len(html))
        self._visible_parts = len(html)
        self.shown_markdown = markdown

    def _action(
        self, row: QHBoxLayout, name: str, label: str, slot: Callable[[], object]
    ) -> QToolButton:
        button = QToolButton()
        button.setObjectName("Small")
        if name:
            button.setIcon(icon(name))
        button.setToolTip(label)
        button.setAccessibleName(label)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    def _toggle_reasoning(self, shown: bool) -> None:
        self.reasoning.setVisible(shown)
        self.reasoning_toggle.setText(self.tr("▾ Reasoning") if shown else self.tr("▸ Reasoning"))

    def _toggle_tools(self, shown: bool) -> None:
        self.tools.setVisible(shown)
        self._label_tools()

    def _label_tools(self) -> None:
        calls = sum(len(step.calls) for step in self._turn.tool_steps)
        arrow = "▾" if self.tools_toggle.isChecked() else "▸"
        self.tools_toggle.setText(self.tr("{arrow} Tools ({n} calls)").format(arrow=arrow, n=calls))

    def refresh(self) -> None:
        """Re-render from the turn (called while it streams, throttled by the view)."""
        turn = self._turn
        self.tools_toggle.setVisible(bool(turn.tool_steps))
        if turn.tool_steps:
            self._label_tools()
            self.tools.setText(tools_text(turn))
        markdown = turn.content or (self.waiting if turn.role == "assistant" else "")
        if markdown != self.shown_markdown:  # the view also refreshes for the footer alone
            self._show(markdown)
        self.reasoning.setText(turn.reasoning)
        self.reasoning_toggle.setVisible(bool(turn.reasoning))
        self.footer.setText(footer_text(turn))
        self.copy_code_button.setVisible(bool(self._renderer.code))
        if turn.citations != self._shown_citations:
            self._shown_citations = list(turn.citations)
            self.citations.show_citations(turn.citations, cited=was_cited(turn))

    def _copy(self) -> None:
        copy_text(self._turn.content, self.copy_button)

    def _copy_code(self) -> None:
        copy_text("\n\n".join(self._renderer.code), self.copy_code_button)

    def _link(self, url: str) -> None:
        # Only our own copy:N links do something; a model's links never open (no network).
        if not url.startswith(COPY_SCHEME):
            return
        blocks = self._renderer.code  # numbered as shown
        number = url.removeprefix(COPY_SCHEME)
        if number.isdigit() and int(number) < len(blocks):
            copy_text(blocks[int(number)], self.body, QCursor.pos())


def tools_text(turn: Turn) -> str:
    """Each call of the answer with its arguments, outcome and (shortened) result."""
    lines: list[str] = []
    for step in turn.tool_steps:
        if step.content:
            lines.append(step.content)
        outcomes = {r.call_id: r for r in step.results}
        for call in step.calls:
            outcome = outcomes.get(call.id)
            status = outcome.status if outcome is not None else "not run"
            lines.append(f"{call.name} {call.arguments} → {status}")
            if outcome is not None and outcome.text:
                text = outcome.text if len(outcome.text) <= 600 else outcome.text[:600] + " …"
                lines.append("  " + text.replace("\n", "\n  "))
    return "\n".join(lines)
