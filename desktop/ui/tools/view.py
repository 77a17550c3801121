"""The Tools screen: the MCP servers a chat may call, whether the policy lets each run
(and why not), and their tools once tested. Window's thread; starting a server to list
its tools runs on a worker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.tools import ServerConfig, ServerState
from desktop.ui.common.error_text import error_text
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.common.workers import TaskWorker, WorkerPool
from desktop.ui.tools.server_form import PasteServers, ServerForm

if TYPE_CHECKING:
    from desktop.tools import ServerList, ToolBox


class ToolServers(Protocol):
    """What the Tools screen reads; asked each time, so the server list and toolbox
    rebuilt after a settings change (policy McpServers, offline) are the ones shown."""

    @property
    def tool_servers(self) -> ServerList:
        """The configured MCP servers (IT's and the user's)."""

    @property
    def toolbox(self) -> ToolBox:
        """The tools chats may call, their servers' states, approvals and logs."""


SERVER_ROLE = Qt.ItemDataRole.UserRole + 1  # a server row's ServerConfig
STATE_ROLE = Qt.ItemDataRole.UserRole + 2  # a refused or failed server's whole state
FAILED_ROLE = Qt.ItemDataRole.UserRole + 3  # whether it failed (it has a log to show)
STATE_WIDTH = 260  # px: the widest the state column starts; a longer error is in its tooltip


class ToolsView(QWidget):
    """Built-in tools, then each configured server with its state and (tested) tools."""

    def __init__(
        self, context: ToolServers, pool: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._pool = pool
        self._server_items: dict[str, QTreeWidgetItem] = {}  # each server's row, by name
        self._builtin_item: QTreeWidgetItem | None = None  # the built-in tools' row
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)  # as every other page
        title = QLabel(self.tr("Tools"))
        title.setObjectName("Title")
        layout.addWidget(title)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(
            [self.tr("Server or tool"), self.tr("State"), self.tr("Command or URL")]
        )
        self.tree.setAccessibleName(self.tr("Tool servers"))
        # Names must be read whole; a state can be a long error (its tooltip has it all).
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self._editable_rows()
        layout.addWidget(self.tree, 1)
        # The selected server's whole state and its log's last lines, wrapped: a failure's
        # reason is never cut off at the column's edge.
        self.details = FitLabel()
        self.details.setObjectName("Muted")
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setVisible(False)
        layout.addWidget(self.details)
        layout.addLayout(self._build_buttons())
        self.reload()

    def _editable_rows(self) -> None:
        """A server's row is edited by double-click or its menu, removed by Delete too."""
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.itemDoubleClicked.connect(lambda _item, _column: self.edit_selected())
        self.tree.currentItemChanged.connect(lambda _now, _before: self._enable_edits())
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.tree)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.ask_remove)
        self.menu: QMenu | None = None  # the context menu last opened

    def _build_buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.test_button = QPushButton(self.tr("Start and list tools"))
        self.test_button.clicked.connect(self.test_servers)
        self.reload_button = QPushButton(self.tr("Reload"))
        self.reload_button.clicked.connect(self.reload)
        self.forget_button = QPushButton(self.tr("Ask again"))
        self.forget_button.setToolTip(
            self.tr("Forget the selected 'Always for this tool' answer: its next call asks again")
        )
        self.forget_button.clicked.connect(self.forget_selected)
        self.add_button = QPushButton(self.tr("Add server…"))
        self.add_button.clicked.connect(self.open_form)
        self.paste_button = QPushButton(self.tr("Paste mcp.json…"))
        self.paste_button.clicked.connect(self.open_paste)
        self.edit_button = QPushButton(self.tr("Edit…"))
        self.edit_button.setAccessibleName(self.tr("Edit the selected tool server"))
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button = QPushButton(self.tr("Remove…"))
        self.remove_button.setObjectName("Danger")
        self.remove_button.setAccessibleName(self.tr("Remove the selected tool server"))
        self.remove_button.clicked.connect(self.ask_remove)
        self.form: ServerForm | None = None  # the open "Add a tool server" dialog
        self.paste: PasteServers | None = None  # the open "Paste an mcp.json" dialog
        row.addWidget(self.add_button)
        row.addWidget(self.paste_button)
        row.addWidget(self.edit_button)
        row.addWidget(self.remove_button)
        row.addWidget(self.test_button)
        row.addWidget(self.reload_button)
        row.addWidget(self.forget_button)
        row.addStretch(1)
        return row

    def open_form(self) -> ServerForm:
        """Open the form that adds one server (a command or a URL)."""
        form = ServerForm(self._context.tool_servers, self)
        form.added.connect(self._added)
        form.finished.connect(form.deleteLater)
        self.form = form
        form.open()
        return form

    def selected_server(self) -> ServerConfig | None:
        """The server whose row (or one of whose tools or log lines) is selected."""
        item = self.tree.currentItem()
        while item is not None:
            config = item.data(0, SERVER_ROLE)
            if isinstance(config, ServerConfig):
                return config
            item = item.parent()
        return None

    def _enable_edits(self) -> None:
        """Edit… and Remove… only on a server of the user's, Ask again only on a kept
        answer; a disabled one says why on hover."""
        config = self.selected_server()
        mine = config is not None and config.source == "user"  # IT's servers stay
        self.edit_button.setEnabled(mine)
        self.remove_button.setEnabled(mine)
        why = "" if mine else self._why_not_editable(config)
        self.edit_button.setToolTip(why)
        self.remove_button.setToolTip(why)
        item = self.tree.currentItem()
        kept = item is not None and bool(item.data(0, Qt.ItemDataRole.UserRole))
        self.forget_button.setEnabled(kept)
        self.forget_button.setToolTip(
            self.tr("Forget the selected 'Always for this tool' answer: its next call asks again")
            if kept
            else self.tr("Select a tool under 'Always allowed' first.")
        )
        self._show_details(config)

    def _why_not_editable(self, config: ServerConfig | None) -> str:
        """Why the selected row cannot be edited or removed."""
        if config is not None:
            return self.tr("{name} is provided by your organization and cannot be removed.").format(
                name=config.name
            )
        if self._in_builtins(self.tree.currentItem()):
            return self.tr("The built-in documents tools come with EdgeDesk and cannot be removed.")
        return self.tr("Select a tool server you added to edit or remove it.")

    def _in_builtins(self, item: QTreeWidgetItem | None) -> bool:
        """Whether ``item`` is the built-in tools' row or one of their tools."""
        while item is not None:
            if item is self._builtin_item:
                return True
            item = item.parent()
        return False

    def _show_details(self, config: ServerConfig | None) -> None:
        """Under the list: the selected server's state in full, and when it failed, the
        last lines its log has."""
        item = self._server_items.get(config.name) if config is not None else None
        if config is None or item is None or not item.data(1, STATE_ROLE):
            self.details.setVisible(False)
            return
        lines = [f"{config.name}: {item.data(1, STATE_ROLE)}"]
        tail = self._context.toolbox.clients.log_tail(config.name)
        if item.data(1, FAILED_ROLE) and tail:
            lines.append(self.tr("Its log ends with:"))
            lines.extend(tail.splitlines())
        self.details.setText("\n".join(lines))
        self.details.setVisible(True)

    def _context_menu(self, where: QPoint) -> None:
        item = self.tree.itemAt(where)
        if item is None:
            return
        self.tree.setCurrentItem(item)
        config = self.selected_server()
        if config is None or config.source != "user":
            return
        menu = QMenu(self)
        menu.addAction(self.tr("Edit…"), self.edit_selected)
        menu.addAction(self.tr("Remove…"), self.ask_remove)
        self.menu = menu
        menu.popup(self.tree.viewport().mapToGlobal(where))

    def edit_selected(self) -> ServerForm | None:
        """Open the form on the selected server (None when no server of the user's is)."""
        config = self.selected_server()
        if config is None or config.source != "user":
            return None
        form = ServerForm(self._context.tool_servers, self, editing=config)
        form.added.connect(self._edited)
        form.finished.connect(form.deleteLater)
        self.form = form
        form.open()
        return form

    def _edited(self, name: str) -> None:
        self._context.toolbox.clients.retry(name)  # its next start uses the new settings
        self.reload()
        saved = self.tr("Saved {name}. Start and list tools to try it.")
        self.note.setText(saved.format(name=name))

    def ask_remove(self) -> bool:
        """Ask, then remove the selected server (and its token); True if it was removed."""
        config = self.selected_server()
        if config is None:
            return False
        if config.source != "user":
            self.note.setText(
                self.tr("{name} is provided by your organization and cannot be removed.").format(
                    name=config.name
                )
            )
            return False
        answer = QMessageBox.question(
            self,
            self.tr("Remove tool server"),
            self.tr(
                "Remove the tool server {name}? Chats can no longer call its tools; its "
                "token, if any, is deleted from the OS keyring."
            ).format(name=config.name),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        return self.remove(config.name)

    def remove(self, name: str) -> bool:
        """Remove server ``name`` as ``edgedesk tools rm`` does; False with the reason said."""
        try:
            self._context.tool_servers.remove(name)
        except EdgeDeskError as exc:
            self.note.setText(error_text(exc))
            return False
        self.reload()
        self.note.setText(self.tr("Removed the tool server {name}.").format(name=name))
        return True

    def open_paste(self) -> PasteServers:
        """Open the box an ``mcp.json`` is pasted into."""
        paste = PasteServers(self._context.tool_servers, self)
        paste.added.connect(self._added)
        paste.finished.connect(paste.deleteLater)
        self.paste = paste
        paste.open()
        return paste

    def _added(self, names: object) -> None:
        listed = names if isinstance(names, list) else [names]
        self.reload()
        self.note.setText(
            self.tr("Added {names}. Start and list tools to try them.").format(
                names=", ".join(str(n) for n in listed)
            )
        )

    def reload(self) -> None:
        """List the servers as configured, without starting any."""
        try:
            self.show_states(self._context.toolbox.states(start=False))
        except EdgeDeskError as exc:
            self._builtin_item = None
            self.tree.clear()
            self._enable_edits()  # nothing listed: nothing to edit, remove or forget
            self.note.setText(error_text(exc))

    def test_servers(self) -> None:
        """Start every allowed server on a worker and show the tools each offers; a server
        that failed a moment ago is tried again now (the user may have fixed it)."""
        self.test_button.setEnabled(False)
        toolbox = self._context.toolbox
        for config in toolbox.servers.all():
            toolbox.clients.retry(config.name)
        worker = TaskWorker(lambda: toolbox.states(start=True), "tools")
        worker.result.connect(self._tested)
        worker.failed.connect(self._failed)
        self._pool.start(worker)

    def _tested(self, _key: str, states: object) -> None:
        self.test_button.setEnabled(True)
        if isinstance(states, list):
            self.show_states(states)

    def _failed(self, _key: str, message: str) -> None:
        self.test_button.setEnabled(True)
        self.note.setText(message)

    def _add_log_tail(self, item: QTreeWidgetItem, name: str) -> None:
        """Under a server that failed: the last lines it wrote, and where its log is."""
        clients = self._context.toolbox.clients
        path = clients.log_path(name)
        tail = clients.log_tail(name)
        if path is None:
            return
        where = QTreeWidgetItem(
            [self.tr("Its log"), "", str(path) if tail else self.tr("(nothing written)")]
        )
        item.addChild(where)
        for line in tail.splitlines():
            child = QTreeWidgetItem(["", "", line])
            child.setToolTip(2, line)
            where.addChild(child)

    def forget_selected(self) -> None:
        """Forget the selected "Always" answer (the next call of that tool asks again)."""
        item = self.tree.currentItem()
        kept = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        approvals = self._context.toolbox.approvals
        if not kept or approvals is None:
            self.note.setText(self.tr("Select a tool under 'Always allowed' first."))
            return
        try:
            approvals.forget(*kept)
        except OSError as exc:
            self.note.setText(str(exc))
            return
        self.reload()

    def show_states(self, states: list[ServerState]) -> None:
        """Fill the tree: built-ins first, then each server and its tools."""
        toolbox = self._context.toolbox
        self._server_items = {}
        self._builtin_item = None
        self.tree.clear()
        builtin = QTreeWidgetItem([self.tr("Built-in (documents)"), self.tr("no approval"), ""])
        for name in sorted(toolbox.builtins):
            builtin.addChild(QTreeWidgetItem([name, "", ""]))
        self.tree.addTopLevelItem(builtin)
        self._builtin_item = builtin
        for state in states:
            if state.refusal is not None:
                text = self.tr("refused: {why}").format(why=state.refusal)
            elif state.error is not None:
                text = self.tr("failed: {why}").format(why=state.error)
            else:
                text = self.tr("allowed")
            item = QTreeWidgetItem([state.config.name, text, state.config.target])
            item.setData(0, SERVER_ROLE, state.config)
            item.setData(1, STATE_ROLE, text if state.error or state.refusal else "")
            item.setData(1, FAILED_ROLE, state.error is not None)
            self._server_items[state.config.name] = item
            item.setToolTip(1, text)
            if state.error is not None:
                self._add_log_tail(item, state.config.name)
            for tool in state.tools:
                item.addChild(QTreeWidgetItem([tool.name, "", tool.description]))
            self.tree.addTopLevelItem(item)
        approvals = toolbox.approvals
        kept = approvals.all() if approvals is not None else []
        if kept:
            how = (
                self.tr("not honoured: approval required")
                if toolbox.require_approval
                else self.tr("runs without asking")
            )
            always = QTreeWidgetItem([self.tr("Always allowed"), how, ""])
            for server, name in kept:
                child = QTreeWidgetItem([f"{server}/{name}", "", ""])
                child.setData(0, Qt.ItemDataRole.UserRole, (server, name))
                always.addChild(child)
            self.tree.addTopLevelItem(always)
        self.tree.expandAll()
        self._enable_edits()
        self.tree.resizeColumnToContents(1)
        self.tree.setColumnWidth(1, min(self.tree.columnWidth(1), STATE_WIDTH))
        policy = toolbox.servers.policy
        notes = []
        if toolbox.require_approval:
            notes.append(self.tr("Your organization requires approval of every tool call."))
        if not policy.allow_user:
            notes.append(self.tr("Only the tool servers your organization lists may run."))
        if not states:
            notes.append(self.tr("No tool servers yet: Add server… or Paste mcp.json… adds one."))
        self.note.setText(" ".join(notes))
