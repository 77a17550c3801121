"""The window's question before an MCP tool runs: the tool, its server and its arguments,
with Allow once / Always for this tool / Deny. Window's thread only."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.chat.session import Decision
from desktop.ui.workers import ApprovalRequest


def arguments_text(arguments: str) -> str:
    """The call's arguments, indented when they are JSON (as written otherwise)."""
    try:
        return json.dumps(json.loads(arguments or "{}"), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments


class ToolApproval(QMessageBox):
    """One call to approve; ``decision`` after ``exec``."""

    def __init__(
        self,
        request: ApprovalRequest,
        *,
        always_allowed: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Allow a tool?"))
        self.setIcon(QMessageBox.Icon.Question)
        self.setText(
            self.tr("The model wants to run {tool} on the tool server {server}.").format(
                tool=request.spec.name, server=request.spec.server
            )
        )
        self.setInformativeText(self.tr("Arguments:"))
        self.setDetailedText(arguments_text(request.call.arguments))
        self.once = self.addButton(self.tr("Allow once"), QMessageBox.ButtonRole.AcceptRole)
        # McpRequireApproval: every call asks, so "Always" is not offered.
        self.always = (
            self.addButton(self.tr("Always for this tool"), QMessageBox.ButtonRole.YesRole)
            if always_allowed
            else None
        )
        self.deny = self.addButton(self.tr("Deny"), QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.deny)
        self.setEscapeButton(self.deny)

    @property
    def decision(self) -> Decision:
        """What the clicked button means (Deny when the dialog was closed)."""
        clicked = self.clickedButton()
        if clicked is self.once:
            return "once"
        if self.always is not None and clicked is self.always:
            return "always"
        return "deny"
