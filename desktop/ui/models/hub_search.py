"""Search the model hub for GGUF repositories (through the net gate) and download a quant."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.ui.common.error_text import error_text
from desktop.ui.common.net_mode import SettingsInForce, download_refusal, offline_text
from desktop.ui.common.qmodels import human_size
from desktop.ui.common.rich_text import literal_tooltip
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.common.workers import TaskWorker, WorkerPool

if TYPE_CHECKING:
    from desktop.base.net import NetGate
    from desktop.catalog import HubClient

SEARCH_LIMIT = 10


class HubAccess(SettingsInForce, Protocol):
    """What a Hub search reads; asked at each search, so a Hub client rebuilt for a new
    endpoint or proxy is the one used."""

    @property
    def net(self) -> NetGate:
        """The gate for outbound connections (offline mode)."""

    @property
    def hub(self) -> HubClient:
        """Hub metadata."""


class HubSearch(QWidget):
    """A search box, the matching repositories with their quants, and Download."""

    searched = Signal(object)  # the list of catalog._hub.SearchHit
    error = Signal(str)

    def __init__(
        self,
        context: HubAccess,
        pool: WorkerPool,
        download: Callable[[str], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._pool = pool
        self._download = download
        self._worker: TaskWorker | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.query = QLineEdit()
        self.query.setPlaceholderText(self.tr("Search the Hub for GGUF models (e.g. glm-4)"))
        self.query.setAccessibleName(self.tr("Hub search"))
        self.query.returnPressed.connect(self.search)
        self.search_button = QPushButton(self.tr("Search Hub"))
        self.search_button.setAccessibleName(self.tr("Search the model hub"))
        self.search_button.clicked.connect(self.search)
        self.get_button = QPushButton(self.tr("Download quant"))
        self.get_button.setAccessibleName(self.tr("Download the selected quant"))
        self.get_button.clicked.connect(self._download_selected)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setAccessibleName(self.tr("Cancel the Hub search"))
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setVisible(False)
        row.addWidget(self.query, 1)
        row.addWidget(self.search_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.get_button)
        layout.addLayout(row)
        self.results = QTreeWidget()
        self.results.setAccessibleName(self.tr("Hub search results"))
        self.results.setHeaderLabels(
            [self.tr("Repository / quant"), self.tr("Downloads"), self.tr("Size")]
        )
        self.results.setMaximumHeight(170)
        self.results.setVisible(False)
        self.results.itemDoubleClicked.connect(lambda *_: self._download_selected())
        self.status = FitLabel()
        self.status.setObjectName("Muted")
        layout.addWidget(self.results)
        layout.addWidget(self.status)
        self._refused = ""  # the offline reason the status line shows ("": none)
        self.refresh_network()

    def refresh_network(self) -> None:
        """Disable Search Hub and Download quant while they cannot go out, saying why
        (and what undoes it) in their tooltips and the status line."""
        offline = offline_text(self._context.effective)
        downloads = download_refusal(self._context.effective)
        searching = self._worker is not None
        self.search_button.setEnabled(offline is None and not searching)
        self.search_button.setToolTip(offline or self.tr("Search the Hub for GGUF repositories"))
        self.get_button.setEnabled(downloads is None)
        self.get_button.setToolTip(
            downloads or self.tr("Download the quant selected in the results")
        )
        shown = self.status.text()
        if offline is not None and (not shown or shown == self._refused):
            self.status.setText(offline)  # said once, where the search would be
        elif offline is None and shown and shown == self._refused:
            self.status.setText("")  # online again: the reason is over
        self._refused = offline or ""

    def search(self) -> TaskWorker | None:
        """Search on a worker; offline mode refuses at once with a message."""
        text = self.query.text().strip()
        if not text or self._worker is not None:
            return None
        ctx = self._context
        offline = offline_text(ctx.effective)
        if offline is not None:  # Enter in the box: its cause's remedy, not always Settings
            self._fail(offline)
            return None
        try:
            ctx.net.ensure_online(f"search the Hub for '{text}'")
        except EdgeDeskError as exc:
            self._fail(error_text(exc))
            return None
        hub = ctx.hub
        worker = TaskWorker(lambda: hub.search(text, SEARCH_LIMIT), text)
        worker.result.connect(self._on_result)
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_done)
        self._worker = worker
        self.search_button.setEnabled(False)
        self.cancel_button.setVisible(True)
        self.status.setText(self.tr("Searching…"))
        self._pool.start(worker)
        return worker

    def cancel(self) -> None:
        """Give up on the running search: the screen is free at once, and what it
        finds later is dropped (a request cannot be cut off mid-way, only ignored)."""
        if self._worker is None:
            return
        self._worker = None
        self.cancel_button.setVisible(False)
        self.status.setText(self.tr("Search cancelled."))
        self.refresh_network()

    def _current(self) -> bool:
        """Whether the worker that just reported is the running search (not cancelled)."""
        worker = self.sender()
        return worker is not None and worker is self._worker

    def _on_result(self, _query: str, hits: object) -> None:
        if not self._current():
            return
        self.results.clear()
        found = list(hits) if isinstance(hits, list) else []
        for hit in found:
            repo = QTreeWidgetItem([hit.repo, f"{hit.downloads:,}", ""])
            for quant in hit.quants:
                child = QTreeWidgetItem([quant.quant, "", human_size(quant.size)])
                # A split quant is pulled by its first shard; the rest follow.
                child.setData(0, Qt.ItemDataRole.UserRole, f"{hit.repo}:{quant.files[0]}")
                child.setToolTip(0, literal_tooltip("\n".join(quant.files)))
                repo.addChild(child)
            self.results.addTopLevelItem(repo)
            repo.setExpanded(True)
        self.results.setVisible(True)
        self.results.resizeColumnToContents(0)
        self.status.setText(self.tr("%n repositories found", "", len(found)))
        self.searched.emit(found)

    def _download_selected(self) -> None:
        item = self.results.currentItem()
        ref = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if ref:
            self._download(str(ref))
        else:
            self.status.setText(self.tr("Choose a quant under a repository first."))

    def _on_failed(self, _query: str, message: str) -> None:
        if self._current():
            self._fail(message)

    def _on_done(self) -> None:
        if not self._current():
            return
        self._worker = None
        self.cancel_button.setVisible(False)
        self.refresh_network()

    def clear_status(self) -> None:
        """Forget the last search's message (what it was about is over)."""
        if self._worker is None:
            self.status.setText(self._refused)  # offline: why still stands

    def _fail(self, message: str) -> None:
        self.status.setText(message)
        self.error.emit(message)
