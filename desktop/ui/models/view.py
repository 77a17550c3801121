"""The Models screen: the catalog with fit badges, imported files, load and use in chat.

Rows are read from disk on a worker (``listing``) and applied on the window's
thread; refreshes asked for while a listing runs are folded into one more listing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.catalog import CatalogRow
from desktop.engine import LoadReport
from desktop.resolve import ModelDetails
from desktop.ui.common.core_text import machine_summary, placement_text
from desktop.ui.common.error_text import error_text
from desktop.ui.common.look import icon
from desktop.ui.common.net_mode import SettingsInForce, download_refusal
from desktop.ui.common.qmodels import (
    CatalogTableModel,
    ChatModelChoice,
    FitDelegate,
    human_size,
)
from desktop.ui.common.rich_text import literal_tooltip
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.common.workers import DownloadWorker, TaskWorker, WorkerPool
from desktop.ui.models.details import ModelDetailsDialog
from desktop.ui.models.downloads import DownloadSources, ModelDownloads
from desktop.ui.models.hub_search import HubAccess, HubSearch
from desktop.ui.models.listing import (
    Lister,
    Listing,
    ModelFacts,
    imported_row,
    installed_files,
    list_models,
    model_and_projector,
    remote_rows,
)

if TYPE_CHECKING:
    from desktop.engine import BrokenFile, Scheduler
    from desktop.remote import RemoteRegistry


class ModelsScreen(ModelFacts, DownloadSources, HubAccess, SettingsInForce, Protocol):
    """What the Models screen reads and calls (the context's members of the same names;
    asked each time, so members rebuilt after a settings change are the ones used)."""

    @property
    def remote_registry(self) -> RemoteRegistry:
        """The configured remote engines."""

    def remote_models(self, *, max_age_s: float | None = None) -> dict[str, list[str] | str]:
        """Each remote's NAME/MODEL ids, or why it could not be listed."""

    @property
    def broken_models(self) -> BrokenFile:
        """Models marked broken after their worker crashed on every load."""

    @property
    def scheduler(self) -> Scheduler:
        """The gate in front of llama.cpp (loads, retries)."""

    @property
    def scheduler_built(self) -> bool:
        """Whether the scheduler exists (asking builds nothing)."""


class ModelsView(QWidget):
    """Browse the catalog, import a local GGUF, load a model, pick it for chat.

    Lives on the window's thread; ``lister`` (default: ``list_models`` over the context)
    runs on a worker and ``listed`` fires once its rows are in the table.
    """

    models_changed = Signal()
    listed = Signal()  # the rows read from disk are shown (no listing is running)
    use_in_chat = Signal(str)  # model reference
    imported = Signal(str)  # the id an import from the window is known by
    details_shown = Signal(str)  # the id whose details window just opened
    error = Signal(str)

    def __init__(
        self,
        context: ModelsScreen,
        pool: WorkerPool,
        parent: QWidget | None = None,
        *,
        lister: Lister | None = None,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._pool = pool
        self._lister: Lister = lister or (lambda: list_models(context))
        self._listing: TaskWorker | None = None  # the listing running now
        self._relist = False  # asked to refresh while it ran: list once more after it
        self._listed: Listing | None = None  # the last listing applied (None: none yet)
        self._imported: list[CatalogRow] = []
        self._remote: list[CatalogRow] | None = None  # None: not asked yet (network, worker)
        self._broken: dict[str, str] = {}  # crashed on every load: id -> llama.cpp's reason
        self.details_dialog: ModelDetailsDialog | None = None  # the last one opened
        self.table_model = CatalogTableModel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        title = QLabel(self.tr("Models"))
        title.setObjectName("Title")
        self.hardware_label = FitLabel()
        self.hardware_label.setObjectName("Muted")
        layout.addWidget(title)
        layout.addWidget(self.hardware_label)
        layout.addWidget(self._build_filter())
        self.table = QTableView()
        self.table.setModel(self.table_model)
        self.table.setItemDelegateForColumn(5, FitDelegate(self.table))
        self.table.setAccessibleName(self.tr("Model catalog"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setAlternatingRowColors(False)
        self.table.doubleClicked.connect(lambda _index: self._use_selected())
        layout.addWidget(self.table, 1)
        layout.addLayout(self._build_summary())
        layout.addLayout(self._build_buttons(layout))
        layout.addWidget(self.status)
        self.downloads = ModelDownloads(
            context,
            pool,
            self.table_model,
            bar=self.progress,
            status=self.status,
            installed=self._installed,
        )
        self.downloads.changed.connect(self._update_buttons)
        self.downloads.settled.connect(self.refresh)
        self.downloads.error.connect(self._fail)
        self.hub_search = HubSearch(context, pool, self.download)
        self.hub_search.error.connect(self.error)
        layout.addWidget(self.hub_search)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        self._update_buttons()  # nothing selected yet: nothing to act on
        self.refresh()

    def _build_filter(self) -> QLineEdit:
        # Filters the rows shown here (the Hub search below looks online).
        self.filter = QLineEdit()
        self.filter.setPlaceholderText(self.tr("Filter these models (name, kind, quant)"))
        self.filter.setAccessibleName(self.tr("Filter the model list"))
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        return self.filter

    def _build_summary(self) -> QHBoxLayout:
        # Details… sits by the line that sums the selected model up; the row of buttons
        # below already sets the screen's minimum width (issue 24, blocker 2).
        self.details = FitLabel()
        self.details.setObjectName("Muted")
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_button = QPushButton(self.tr("Details…"))
        self.details_button.setAccessibleName(
            self.tr("Show the selected model's details: architecture, files, fit")
        )
        self.details_button.clicked.connect(self._details_selected)
        summary = QHBoxLayout()
        summary.addWidget(self.details, 1)
        summary.addWidget(self.details_button)
        return summary

    def _build_buttons(self, layout: QVBoxLayout) -> QHBoxLayout:
        buttons = QHBoxLayout()
        self.import_button = QPushButton(icon("import"), self.tr("Import GGUF…"))
        self.import_button.setAccessibleName(self.tr("Import a local GGUF file"))
        self.import_button.clicked.connect(self._ask_import)
        self.load_button = QPushButton(self.tr("Load"))
        self.load_button.setAccessibleName(self.tr("Load the selected model into memory"))
        self.load_button.clicked.connect(self._load_selected)
        self.use_button = QPushButton(self.tr("Use in chat"))
        self.use_button.setObjectName("Primary")
        self.use_button.setAccessibleName(self.tr("Use the selected model in the chat"))
        self.use_button.clicked.connect(self._use_selected)
        self.download_button = QPushButton(icon("import"), self.tr("Download"))
        self.download_button.setAccessibleName(self.tr("Download the selected model"))
        self.download_button.setToolTip(self.tr("Download the selected model from the Hub"))
        self.download_button.clicked.connect(self._download_selected)
        self.pause_button = QPushButton(self.tr("Pause"))
        self.pause_button.setAccessibleName(self.tr("Pause the download (resume continues it)"))
        self.pause_button.setToolTip(
            self.tr("Stop for now and keep the downloaded part; Download continues from there")
        )
        self.pause_button.clicked.connect(self._pause_selected)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setAccessibleName(
            self.tr("Cancel the download and delete its partial files")
        )
        self.cancel_button.setToolTip(
            self.tr("Stop the download (running or paused) and delete what was downloaded so far")
        )
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._ask_cancel)
        self.retry_button = QPushButton(self.tr("Retry"))
        self.retry_button.setAccessibleName(
            self.tr("Load the selected model again, although it crashed on every load")
        )
        self.retry_button.setToolTip(
            self.tr("It crashed each time it loaded; after fixing or replacing the file, try again")
        )
        self.retry_button.setVisible(False)
        self.retry_button.clicked.connect(self._retry_selected)
        self.remove_button = QPushButton(icon("delete"), self.tr("Remove"))
        self.remove_button.setAccessibleName(self.tr("Remove the selected model"))
        self.remove_button.clicked.connect(self._ask_remove)
        self.status = FitLabel()  # under the buttons: a long error wraps there
        self.status.setObjectName("Muted")
        self.progress = QProgressBar()
        self.progress.setAccessibleName(self.tr("Download progress"))
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        layout.addWidget(self.progress)
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.pause_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.load_button)
        buttons.addWidget(self.use_button)
        return buttons

    # ------------------------------------------------------------------ rows
    def _installed(self, model_id: str) -> list[Path] | None:
        return installed_files(self._context, model_id)

    def download_refusal(self) -> str | None:
        """Why no model can be downloaded now, with the remedy for its cause (offline
        mode set in Settings, by EDGEDESK_OFFLINE, --offline or the policy; downloads
        turned off), in the window's language; None when downloads may start."""
        return download_refusal(self._context.effective)

    def refresh_network(self) -> None:
        """Enable or disable the download and search buttons for the settings in force
        (called when the screen is shown and when its window comes back to the front,
        e.g. after the Settings dialog closed)."""
        self._update_buttons()
        self.hub_search.refresh_network()

    def event(self, event: QEvent) -> bool:
        """Re-read offline mode when the window is activated again: Settings, a dialog
        over this screen, may have changed it while the screen stayed in view."""
        if event.type() == QEvent.Type.WindowActivate:
            self.refresh_network()
        return super().event(event)

    def showEvent(self, event: QShowEvent) -> None:
        """Re-read offline mode: it may have changed while another screen was shown."""
        self.refresh_network()
        super().showEvent(event)

    @property
    def is_listed(self) -> bool:
        """Whether the rows read from disk are shown and no listing is running."""
        return self._listed is not None and self._listing is None

    def when_listed(self, then: Callable[[], object]) -> None:
        """Call ``then`` now if the rows are listed, else once they are."""
        if self.is_listed:
            then()
            return

        def once() -> None:
            self.listed.disconnect(once)
            then()

        self.listed.connect(once)

    def refresh(self) -> None:
        """Re-read the rows (catalog fit on this machine, what is installed) on a worker;
        they replace the table's when ready. Returns at once."""
        if self._listing is not None:
            self._relist = True  # the running listing may have missed this change
            return
        worker = TaskWorker(self._lister, "models")
        worker.result.connect(self._on_listed)
        worker.failed.connect(self._on_list_failed)
        self._listing = worker
        self._pool.start(worker)

    def _on_listed(self, _key: str, listing: object) -> None:
        self._listing = None
        if isinstance(listing, Listing):
            self._listed = listing
        if self._relist:
            self._relist = False
            self.refresh()
        self._apply()

    def _on_list_failed(self, _key: str, message: str) -> None:
        self._listing = None
        self._listed = self._listed or Listing()
        self._fail(message)
        self._apply()

    def _apply(self) -> None:
        """Show the last listing with this session's imports, downloads and remote models."""
        listing = self._listed or Listing()
        if listing.hardware is not None:
            self.hardware_label.setText(
                self.tr("This machine: ") + machine_summary(listing.hardware)
            )
        listed = {row.id for row in listing.rows}
        # An import is shown at once; once a listing has read it from installed.json
        # that row (the same model) takes its place.
        self._imported = [row for row in self._imported if row.id not in listed]
        rows = [*self._imported, *listing.rows]
        rows += self.downloads.hub_rows({row.id for row in rows}, listing.unfinished)
        rows += self._remote or []
        self.table_model.set_rows(rows)
        self._show_broken()
        self._apply_filter()
        self._selection_changed()
        self.models_changed.emit()
        if self.is_listed:
            self.listed.emit()
        if self._remote is None and self._listed is not None:
            self._ask_remotes()

    def _apply_filter(self) -> None:
        """Hide the rows none of whose shown cells (or id) hold every word typed."""
        words = self.filter.text().casefold().split()
        model = self.table_model
        for number in range(model.rowCount()):
            cells = [str(model.index(number, c).data() or "") for c in range(model.columnCount())]
            text = " ".join([*cells, model.row_at(number).id]).casefold()
            self.table.setRowHidden(number, not all(word in text for word in words))

    def _ask_remotes(self) -> None:
        """List the remote engines' models on a worker (a network call per remote)."""
        ctx = self._context
        self._remote = []
        if not ctx.remote_registry.all() or ctx.net.refusal() is not None:
            return  # none configured, or offline: nothing is asked
        worker = TaskWorker(ctx.remote_models, "remotes")
        worker.result.connect(self._remotes_listed)
        self._pool.start(worker)

    def _remotes_listed(self, key: str, listed: object) -> None:
        rows = remote_rows(
            listed, self._context.remote_registry, self.tr("runs on {0} — leaves this device")
        )
        self._remote = rows
        self._apply()  # nothing on disk changed: no need to list again

    def _selection_changed(self) -> None:
        self._show_details()
        self._update_buttons()

    def _show_broken(self) -> None:
        """Mark the models that crashed on every load (the file other processes share)."""
        self._broken = self._context.broken_models.marked()
        for model_id in self._broken:
            self.table_model.set_status(model_id, self.tr("broken: crashed on every load"))

    def _retry_selected(self) -> None:
        row = self.selected()
        if row is not None:
            self.retry(row.id)

    def retry(self, model_id: str) -> bool:
        """Load ``model_id`` again at its next use although it was marked broken."""
        ctx = self._context
        cleared = (
            ctx.scheduler.retry(model_id)
            if ctx.scheduler_built
            else ctx.broken_models.clear(model_id)
        )
        self._broken.pop(model_id, None)
        self.table_model.clear_status(model_id)
        self.status.setText(
            self.tr("%1 will be loaded again at its next use.").replace("%1", model_id)
        )
        self._update_buttons()
        return cleared

    def _update_buttons(self) -> None:
        """Enable each button only where it can act on the selected row."""
        row = self.selected()
        self.retry_button.setVisible(row is not None and row.id in self._broken)
        if row is not None and row.id in self._broken:
            self.status.setText(
                self.tr("It crashed every time it loaded: %1").replace("%1", self._broken[row.id])
            )
        self.cancel_button.setEnabled(row is not None and self.downloads.cancellable(row.id))
        # On this device: Details read the file's header, Remove forgets or deletes it;
        # a remote engine's model is neither (it is listed while the remote lists it).
        here = row is not None and bool(row.installed) and row.tier != "remote"
        self.details_button.setEnabled(here)
        self.remove_button.setEnabled(here)
        self.load_button.setEnabled(here)
        self.use_button.setEnabled(row is not None and bool(row.installed))
        running = row is not None and row.id in self.downloads.running
        cancelling = row is not None and self.downloads.is_cancelling(row.id)
        self.pause_button.setEnabled(running and not cancelling)
        self._update_download(row, coming=running or cancelling)

    def _update_download(self, row: CatalogRow | None, *, coming: bool) -> None:
        """Download for a model not on this device, not already coming, while downloads
        may start; offline (or with downloads off) it says why and what undoes it."""
        refusal = self.download_refusal()
        self.download_button.setToolTip(
            refusal or self.tr("Download the selected model from the Hub")
        )
        missing = row is not None and not row.installed and row.tier != "remote"
        self.download_button.setEnabled(missing and not coming and refusal is None)

    def _show_details(self) -> None:
        row = self.selected()
        if row is None or not row.installed:
            self.details.setText("")
            return
        found = self._context.installed.matching(row.id)
        if not found:
            self.details.setText(self.tr("Imported in place: ") + ", ".join(row.installed))
            return
        model = found[0]
        if not model.managed:
            self.details.setText(
                self.tr("Imported in place: ")
                + ", ".join(model.files)
                + f" · {human_size(model.size)}"
            )
            self.details.setToolTip(
                literal_tooltip(
                    "\n".join(
                        f"{f}\nSHA-256 {d}" for f, d in zip(model.files, model.sha256, strict=False)
                    )
                )
            )
            return
        digests = " · ".join(
            f"{Path(f).name}: {d[:16]}…" for f, d in zip(model.files, model.sha256, strict=False)
        )
        self.details.setText(
            f"{human_size(model.size)} · " + self.tr("SHA-256 verified at download: ") + digests
        )
        self.details.setToolTip(
            literal_tooltip(
                "\n".join(f"{f}\n{d}" for f, d in zip(model.files, model.sha256, strict=False))
            )
        )

    def chat_models(self) -> list[ChatModelChoice]:
        """``(label, reference)`` of every chat model that can run now, each with the
        remote engine it runs on ("": this device)."""
        rows = (self.table_model.row_at(n) for n in range(self.table_model.rowCount()))
        return [
            # A remote's models are listed as NAME/MODEL (``remote_rows``).
            ChatModelChoice(row.name, row.id, row.id.split("/")[0] if row.tier == "remote" else "")
            for row in rows
            if row.installed and row.kind == "chat"
        ]

    def import_file(self, path: Path) -> str:
        """Import a GGUF where it lies (no copy; remembered in installed.json, as
        ``edgedesk models import`` does); returns the id it is known by (blocking)."""
        return self._imported_now(imported_row(self._context, path))

    def _imported_now(self, row: CatalogRow) -> str:
        self._imported = [r for r in self._imported if r.id != row.id] + [row]
        self._apply()  # usable at once; the listing below catches up with the disk
        self.refresh()
        return row.id

    def _ask_import(self) -> None:
        chosen = self.ask_files(self)
        if chosen:
            self.import_later(*chosen)

    def ask_files(self, parent: QWidget) -> list[Path]:
        """Ask for a GGUF model, or a vision model and its projector chosen together."""
        names, _ = QFileDialog.getOpenFileNames(
            parent,
            self.tr("Import a GGUF model (for a vision model, select its mmproj projector too)"),
            "",
            self.tr("GGUF models (*.gguf)"),
        )
        return [Path(n) for n in names]

    def import_later(self, *paths: Path) -> TaskWorker:
        """Import the model among ``paths`` (with its projector, if one is among them) on
        a worker (a big file takes seconds to hash); the row and "Imported …" appear when
        it is done, an error in the status line if it fails."""
        context = self._context
        worker = TaskWorker(
            lambda: imported_row(context, *model_and_projector(list(paths))), "import"
        )
        worker.result.connect(self._import_done)
        worker.failed.connect(self._import_failed)
        self.status.setText(self.tr("Importing ") + paths[0].name + "…")
        self._pool.start(worker)
        return worker

    def _import_done(self, _key: str, row: object) -> None:
        if isinstance(row, CatalogRow):
            model_id = self._imported_now(row)
            self.status.setText(self.tr("Imported ") + model_id)
            self.hub_search.clear_status()  # an earlier search's error is over now
            self.imported.emit(model_id)

    def _import_failed(self, _key: str, message: str) -> None:
        self._fail(message)  # an import's, or the details' (their file went away)

    # ------------------------------------------------------------------ actions
    def selected(self) -> CatalogRow | None:
        """The selected row, if any."""
        rows = self.table.selectionModel().selectedRows()
        return self.table_model.row_at(rows[0].row()) if rows else None

    def _use_selected(self) -> None:
        row = self.selected()
        if row is None:
            return
        if not row.installed:
            self._fail(self.tr("Download this model first: ") + row.id)
            return
        if row.kind != "chat":  # it cannot answer: choosing it emptied the chat's model
            self._fail(
                (
                    self.tr(
                        "%1 is an embedding model: it cannot chat. Documents → New "
                        "collection uses it to index files."
                    )
                    if row.kind == "embedding"
                    else self.tr("%1 cannot chat.")
                ).replace("%1", row.name)
            )
            return
        self.use_in_chat.emit(row.id)

    def _details_selected(self) -> None:
        row = self.selected()
        if row is not None and row.installed:
            self.show_details(row.id)

    def show_details(self, model_id: str) -> TaskWorker:
        """Read ``model_id``'s details on a worker (its header; a file's SHA-256 unless the
        installed index has it) and open them in a window of their own."""
        context = self._context
        known = {
            f: d
            for m in context.installed.matching(model_id)
            for f, d in zip(m.files, m.sha256, strict=False)
        }
        worker = TaskWorker(lambda: context.resolver.details(model_id, known), model_id)
        worker.result.connect(self._details_read)
        worker.failed.connect(self._import_failed)  # says the error in the status line
        self.status.setText(self.tr("Reading the details of %1…").replace("%1", model_id))
        self._pool.start(worker)
        return worker

    def _details_read(self, model_id: str, details: object) -> None:
        if not isinstance(details, ModelDetails):
            return
        if self.status.text().endswith("…"):
            self.status.setText("")
        if self.details_dialog is not None:  # one details window at a time
            self.details_dialog.close()
            self.details_dialog.deleteLater()
        self.details_dialog = ModelDetailsDialog(details, self)
        self.details_dialog.show()
        self.details_shown.emit(model_id)

    def _load_selected(self) -> None:
        row = self.selected()
        if row is None or not row.installed:
            return
        self.load(row.id)

    def load(self, model_id: str) -> TaskWorker:
        """Load ``model_id`` on a worker thread; the Status column shows progress."""
        context = self._context  # the scheduler is built on the worker if need be
        worker = TaskWorker(lambda: context.scheduler.load(model_id), model_id)
        self.table_model.set_status(model_id, self.tr("loading…"))
        worker.result.connect(self._loaded)
        worker.failed.connect(self._load_failed)
        self._pool.start(worker)
        return worker

    def _ask_remove(self) -> None:
        row = self.selected()
        if row is None or not row.installed:
            return
        answer = QMessageBox.question(
            self,
            self.tr("Remove model"),
            self.tr(
                "Remove %1? Downloaded files are deleted; imported files are only forgotten."
            ).replace("%1", row.name),
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.remove(row.id)

    def remove(self, model_id: str) -> bool:
        """Forget ``model_id``; delete its files only if EdgeDesk downloaded them."""
        before = len(self._imported)
        self._imported = [r for r in self._imported if r.id != model_id]
        removed = len(self._imported) < before
        try:
            self._context.installed.remove(model_id)
            removed = True
        except EdgeDeskError as exc:
            if not removed:
                self._fail(error_text(exc))
                return False
        self.status.setText(self.tr("Removed ") + model_id)
        self.refresh()
        return True

    # ------------------------------------------------------------------ downloads
    def _download_selected(self) -> None:
        row = self.selected()
        if row is not None and not row.installed:
            self.download(row.id)

    def _pause_selected(self) -> None:
        row = self.selected()
        if row is not None:
            self.pause(row.id)

    def _ask_cancel(self) -> None:
        row = self.selected()
        if row is None or not self.downloads.cancellable(row.id):
            return
        answer = QMessageBox.question(
            self,
            self.tr("Cancel download"),
            self.tr(
                "Cancel the download of %1 and delete what was downloaded so far? "
                "Pause keeps it instead."
            ).replace("%1", row.name),
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.cancel(row.id)

    def download(self, ref: str, quant: str | None = None) -> DownloadWorker | None:
        """Download (or resume) ``ref`` on a worker, with progress in the table and bar."""
        worker = self.downloads.start(ref, quant)
        shown = (self.table_model.row_at(n).id for n in range(self.table_model.rowCount()))
        if worker is not None and ref not in shown:
            self._apply()  # a Hub search pick: a row of its own now, with Pause and Cancel
        return worker

    def pause(self, ref: str) -> None:
        """Stop the download of ``ref``; Download resumes it from the bytes kept."""
        self.downloads.pause(ref)

    def cancel(self, ref: str) -> None:
        """Stop the download of ``ref`` (running or paused) and delete its partial files."""
        self.downloads.cancel(ref)

    def _loaded(self, model_id: str, report: LoadReport) -> None:
        # Where it runs, said at the load too (and under each answer it writes).
        where = f" · {placement_text(report.placement)}" if report.placement is not None else ""
        self.table_model.set_status(
            model_id,
            self.tr("loaded") + f"{where} · ctx {report.context_length} · {report.load_s:.1f} s",
        )

    def _load_failed(self, model_id: str, message: str) -> None:
        self.table_model.set_status(model_id, "")
        self._fail(message)
        self._show_broken()  # a third crash in a row marks it
        self._update_buttons()

    def _fail(self, message: str) -> None:
        self.status.setText(message)
        self.error.emit(message)

    def forget_error(self, message: str) -> None:
        """Clear the status line if it still shows ``message`` (what it was about is over)."""
        if message and self.status.text() == message:
            self.status.setText("")
