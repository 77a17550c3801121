"""Adding MCP tool servers in the window: a form (a command or a URL, its environment,
a bearer token kept in the OS keyring) and a box to paste an ``mcp.json`` into.

What they write is what ``edgedesk tools add`` writes (``mcp.json``, the keyring).
Window's thread only; both dialogs are window-modal without a nested event loop.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.tools import (
    ServerConfig,
    ServerList,
    check_url,
    pasted_servers,
    token_get,
    token_set,
)
from desktop.ui.common.error_text import error_text

COMMAND, URL = 0, 1  # the kind box's rows


def parse_env(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines (blank lines skipped); InvalidRequest naming a bad line."""
    env: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise InvalidRequest(f"each environment line is KEY=VALUE, not '{line.strip()}'")
        env[key.strip()] = value
    return env


class ServerForm(QDialog):
    """One server by form, new or ``editing`` one already there; ``added`` carries its
    name once it is in ``mcp.json``."""

    added = Signal(str)

    def __init__(
        self,
        servers: ServerList,
        parent: QWidget | None = None,
        *,
        keep_token: Callable[[str, str], None] = token_set,
        editing: ServerConfig | None = None,
    ) -> None:
        super().__init__(parent)
        self._servers = servers
        self._keep_token = keep_token
        self._editing = editing
        self.setWindowTitle(
            self.tr("Add a tool server") if editing is None else self.tr("Edit a tool server")
        )
        self.name = QLineEdit()
        self.name.setPlaceholderText(self.tr("e.g. files"))
        self.kind = QComboBox()
        self.kind.addItems(
            [self.tr("Command (runs on this computer)"), self.tr("URL (a server on the network)")]
        )
        self.command = QLineEdit()
        self.command.setPlaceholderText(
            "npx -y @modelcontextprotocol/server-filesystem ~/Documents"
        )
        self.env = QPlainTextEdit()
        self.env.setPlaceholderText(self.tr("KEY=VALUE, one a line (optional)"))
        self.env.setMaximumHeight(80)
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://tools.example.com/mcp")
        self.token = QLineEdit()
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText(self.tr("optional; kept in the OS keyring, not in a file"))
        self.error = QLabel()
        self.error.setObjectName("Error")
        self.error.setWordWrap(True)
        self.form = QFormLayout()
        self.form.addRow(self.tr("Name"), self.name)
        self.form.addRow(self.tr("Kind"), self.kind)
        self.form.addRow(self.tr("Command"), self.command)
        self.form.addRow(self.tr("Environment"), self.env)
        self.form.addRow(self.tr("URL"), self.url)
        self.form.addRow(self.tr("Bearer token"), self.token)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self._kind_changed(COMMAND)
        if editing is not None:
            self._fill(editing)
        self.resize(560, self.sizeHint().height())

    def _fill(self, config: ServerConfig) -> None:
        """Show ``config`` as the form would have written it (its token stays unshown)."""
        self.name.setText(config.name)
        if config.is_http:
            self.kind.setCurrentIndex(URL)
            self.url.setText(config.url)
            self.token.setPlaceholderText(self.tr("kept as it is unless you type a new one"))
        else:
            self.kind.setCurrentIndex(COMMAND)
            self.command.setText(shlex.join([config.command, *config.args]))
            self.env.setPlainText("".join(f"{k}={v}\n" for k, v in config.env.items()))

    def _kind_changed(self, kind: int) -> None:
        for widget, shown in (
            (self.command, kind == COMMAND),
            (self.env, kind == COMMAND),
            (self.url, kind == URL),
            (self.token, kind == URL),
        ):
            self.form.setRowVisible(widget, shown)

    def config(self) -> ServerConfig:
        """The server the form describes; InvalidRequest saying what is missing."""
        name = self.name.text().strip()
        if not name:
            raise InvalidRequest("give the server a name")
        if self.kind.currentIndex() == URL:
            # Headers have no field: an edited server keeps the ones its mcp.json had.
            kept = self._editing.headers if self._editing is not None else {}
            return ServerConfig(name, url=check_url(self.url.text()), headers=dict(kept))
        try:
            words = shlex.split(self.command.text())
        except ValueError as exc:
            raise InvalidRequest(f"the command cannot be read ({exc})") from None
        if not words:
            raise InvalidRequest("give the command that starts the server")
        return ServerConfig(
            name, command=words[0], args=tuple(words[1:]), env=parse_env(self.env.toPlainText())
        )

    def save(self) -> bool:
        """Write the server (and its token); False with the reason shown when refused."""
        try:
            config = self.config()
            token = self.token.text().strip() if config.is_http else ""
            old = self._editing
            renamed = old is not None and old.name != config.name
            if renamed and not token and config.is_http and old is not None:
                token = token_get(old.name) or ""  # a renamed server keeps its token
            if token:  # first: without a keyring, nothing is added half-way
                self._keep_token(config.name, token)
            self._servers.add(config)
            if renamed and old is not None:
                self._servers.remove(old.name)  # after the new one is written: never none
        except EdgeDeskError as exc:
            self.error.setText(error_text(exc))
            return False
        self.added.emit(config.name)
        self.accept()
        return True


class PasteServers(QDialog):
    """Servers from a pasted ``mcp.json``; ``added`` carries their names once written."""

    added = Signal(list)

    def __init__(self, servers: ServerList, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._servers = servers
        self.setWindowTitle(self.tr("Paste an mcp.json"))
        hint = QLabel(
            self.tr(
                "Paste the servers as an mcp.json holds them (LM Studio, Cursor, Claude "
                "Desktop and VS Code write them this way):"
            )
        )
        hint.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText(
            '{\n  "mcpServers": {\n    "files": {\n      "command": "npx",\n'
            '      "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/Documents"]\n'
            "    }\n  }\n}"
        )
        self.error = QLabel()
        self.error.setObjectName("Error")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = buttons.addButton(
            self.tr("Add servers"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(600, 420)

    def save(self) -> bool:
        """Add the pasted servers (all read first, then added in turn); False with the
        reason shown when the text or a server is refused."""
        try:
            found = pasted_servers(self.text.toPlainText())
            for config in found:
                self._servers.add(config)
        except EdgeDeskError as exc:
            self.error.setText(error_text(exc))
            return False
        self.added.emit([c.name for c in found])
        self.accept()
        return True
