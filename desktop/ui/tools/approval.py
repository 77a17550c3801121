"""The window's question before MCP tools run: one dialog per round of tool calls.

It lists every call the model made in the round (identical calls once, with how many),
each with its tool, server and arguments in plain sight; the user allows them all,
denies them all, or ticks the ones to run. It is not modal: the chat's Stop stays within
reach, and the dialog has its own "Stop the answer". It states how many rounds of tool
calls the answer may still take. Window's thread only.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.chat import Decision
from desktop.ui.common.workers import ApprovalRequest

ONE_LINE_CHARS = 160  # the list's arguments column: the whole call fits on a wide screen


def arguments_text(arguments: str) -> str:
    """The call's arguments, indented when they are JSON (as written otherwise)."""
    try:
        return json.dumps(json.loads(arguments or "{}"), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments


def arguments_line(arguments: str) -> str:
    """The call's arguments on one line (shortened with … past ``ONE_LINE_CHARS``)."""
    try:
        text = json.dumps(json.loads(arguments or "{}"), ensure_ascii=False)
    except ValueError:
        text = " ".join(arguments.split())
    return text if len(text) <= ONE_LINE_CHARS else text[: ONE_LINE_CHARS - 1] + "…"


class ToolApproval(QDialog):
    """One round's calls to approve; ``answered`` carries a Decision per ask.

    Closing the dialog denies every call; ``stop_requested`` asks the chat to stop the
    answer (which denies them too).
    """

    answered = Signal(list)  # list[Decision], one per ask of the request
    stop_requested = Signal()

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self._done = False
        batch = request.batch
        self.setWindowTitle(self.tr("Allow tools?"))
        self.setModal(False)  # the chat's Stop stays reachable
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        calls = sum(a.count for a in batch.asks)
        servers = sorted({a.spec.server for a in batch.asks})
        if len(batch.asks) == 1 and calls == 1:
            ask = batch.asks[0]
            head = self.tr("The model wants to run {tool} on the tool server {server}.").format(
                tool=ask.spec.name, server=ask.spec.server
            )
        else:
            head = self.tr(
                "The model wants to make {calls} tool calls ({distinct} different) on {servers}."
            ).format(calls=calls, distinct=len(batch.asks), servers=", ".join(servers))
        self.summary = QLabel(head)
        self.summary.setWordWrap(True)
        self.limit = QLabel(
            self.tr(
                "Round {step} of at most {limit}: after {limit} rounds of tool calls the "
                "model must answer in words."
            ).format(step=batch.step, limit=batch.max_steps)
        )
        self.limit.setWordWrap(True)
        self.limit.setObjectName("Muted")
        self._build_calls()
        buttons = self._build_buttons()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.limit)
        layout.addWidget(self.calls)
        layout.addWidget(QLabel(self.tr("Arguments:")))
        layout.addWidget(self.arguments, 1)
        layout.addWidget(self.always)
        layout.addLayout(buttons)
        self.resize(640, 420)

    def _build_calls(self) -> None:
        """The round's calls, one row each (ticked), and the selected one's arguments."""
        self.calls = QTreeWidget()
        self.calls.setRootIsDecorated(False)
        self.calls.setHeaderLabels(
            [self.tr("Run"), self.tr("Tool"), self.tr("Server"), self.tr("Arguments")]
        )
        self.calls.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        for ask in self.request.batch.asks:
            name = ask.spec.name if ask.count == 1 else f"{ask.spec.name} ×{ask.count}"
            item = QTreeWidgetItem(["", name, ask.spec.server, arguments_line(ask.call.arguments)])
            item.setCheckState(0, Qt.CheckState.Checked)
            item.setToolTip(3, arguments_text(ask.call.arguments))
            self.calls.addTopLevelItem(item)
        header = self.calls.header()
        for column in (0, 1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # Short for a few calls: the room below is for the selected call's arguments.
        self.calls.setMaximumHeight(min(220, 40 + 28 * len(self.request.batch.asks)))
        self.arguments = QPlainTextEdit()
        self.arguments.setReadOnly(True)
        self.arguments.setAccessibleName(self.tr("Arguments of the selected call"))
        self.calls.currentItemChanged.connect(self._show_arguments)
        first = self.calls.topLevelItem(0)
        if first is not None:
            self.calls.setCurrentItem(first)

    def _build_buttons(self) -> QHBoxLayout:
        """Always, and Stop / Deny all / Allow ticked only / Allow all."""
        self.always = QCheckBox(self.tr("Always allow these tools (not asked again)"))
        # Under McpRequireApproval every call asks: "Always" is not offered.
        self.always.setVisible(self.request.batch.always_offered)
        self.allow_all = QPushButton(self.tr("Allow all"))
        self.allow_checked = QPushButton(self.tr("Allow ticked only"))
        self.allow_checked.setVisible(len(self.request.batch.asks) > 1)
        self.deny_all = QPushButton(self.tr("Deny all"))
        self.stop = QPushButton(self.tr("Stop the answer"))
        self.allow_all.clicked.connect(self._allow_all)
        self.allow_checked.clicked.connect(self._allow_ticked)
        self.deny_all.clicked.connect(self._deny_all)
        self.stop.clicked.connect(self._stop)
        self.deny_all.setDefault(True)  # Enter never runs a tool by accident
        buttons = QHBoxLayout()
        buttons.addWidget(self.stop)
        buttons.addStretch(1)
        buttons.addWidget(self.deny_all)
        buttons.addWidget(self.allow_checked)
        buttons.addWidget(self.allow_all)
        return buttons

    def _show_arguments(
        self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None = None
    ) -> None:
        if item is not None:
            ask = self.request.batch.asks[self.calls.indexOfTopLevelItem(item)]
            self.arguments.setPlainText(arguments_text(ask.call.arguments))

    def _yes(self) -> Decision:
        offered = self.request.batch.always_offered
        return "always" if offered and self.always.isChecked() else "once"

    def _allow_all(self) -> None:
        self._finish([self._yes()] * len(self.request.batch.asks))

    def _allow_ticked(self) -> None:
        yes = self._yes()
        rows = [self.calls.topLevelItem(i) for i in range(self.calls.topLevelItemCount())]
        self._finish(
            [
                yes if row is not None and row.checkState(0) == Qt.CheckState.Checked else "deny"
                for row in rows
            ]
        )

    def _deny_all(self) -> None:
        self._finish(["deny"] * len(self.request.batch.asks))

    def _stop(self) -> None:
        self.stop_requested.emit()
        self._deny_all()

    def _finish(self, decisions: list[Decision]) -> None:
        if not self._done:
            self._done = True
            self.request.answer(decisions)
            self.answered.emit(decisions)
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the dialog denies what it asked."""
        if not self._done:
            self._done = True
            self.request.answer(["deny"] * len(self.request.batch.asks))
        super().closeEvent(event)
