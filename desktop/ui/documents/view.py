"""The Documents screen: collections, adding folders/files, indexing with cancel, skipped files.

A collection's embedding model is picked when it is created; one from the catalog that
is not downloaded yet (also the model of an existing collection whose files are gone)
is offered for download, through the Models screen's downloads, and the indexing
continues once it is installed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.base.defaults import DEFAULT_EMBEDDING_MODEL
from desktop.base.errors import EdgeDeskError
from desktop.ui.common.core_text import skip_reason_text
from desktop.ui.common.error_text import error_text
from desktop.ui.common.look import icon
from desktop.ui.common.net_mode import download_refusal
from desktop.ui.common.qmodels import human_size
from desktop.ui.common.rich_text import literal_tooltip
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.common.workers import DownloadWorker, IndexWorker, WorkerPool
from desktop.ui.documents.embedding_download import Download, EmbeddingDownload, ModelSource
from desktop.ui.documents.language_hint import (
    MULTILINGUAL_MODEL,
    folder_has_cjk,
    lacks_chinese,
)
from desktop.ui.documents.new_collection import (
    EmbeddingModelSource,
    NewCollectionDialog,
    embedding_choices,
    embedding_importer,
)

if TYPE_CHECKING:
    from desktop.base.audit import Auditor
    from desktop.retrieval import CollectionInfo, IndexProgress, IndexReport, Library


class DocumentsScreen(EmbeddingModelSource, ModelSource, Protocol):
    """What the Documents screen reads (the context's members of the same names; asked
    each time, so a library reopened after an encryption switch is the one used)."""

    @property
    def library(self) -> Library:
        """Document collections and their indexing."""

    @property
    def audit(self) -> Auditor:
        """The audit log (a collection removed)."""


class DocumentsView(QWidget):
    """Browse collections, add folders or files, (re-)index them, see what was skipped.

    Lives on the window's thread; indexing and downloads run on workers. ``download`` is
    the Models screen's download starter (None: a missing model is only explained).
    """

    collections_changed = Signal()
    indexing_finished = Signal(object)  # the IndexReport
    error = Signal(str)

    def __init__(
        self,
        context: DocumentsScreen,
        pool: WorkerPool,
        parent: QWidget | None = None,
        *,
        download: Download | None = None,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._pool = pool
        self._worker: IndexWorker | None = None
        self._infos: dict[str, CollectionInfo] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        title = QLabel(self.tr("Documents"))
        title.setObjectName("Title")
        self.model_label = FitLabel()
        self.model_label.setObjectName("Muted")
        layout.addWidget(title)
        layout.addWidget(self.model_label)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self._build_list())
        splitter.addWidget(self._build_details())
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 700])
        layout.addWidget(splitter, 1)
        self.progress = QProgressBar()
        self.progress.setAccessibleName(self.tr("Indexing progress"))
        self.progress.setVisible(False)
        self.status = FitLabel()
        self.status.setObjectName("Muted")
        self.cancel_button = QPushButton(icon("stop"), self.tr("Cancel"))
        self.cancel_button.setAccessibleName(self.tr("Cancel indexing"))
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.download_button = QPushButton(icon("import"), self.tr("Download"))
        self.download_button.setAccessibleName(self.tr("Download the embedding model, then index"))
        self.download_button.clicked.connect(self.download_offered)
        self.download_button.setVisible(False)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        # With the bar hidden the buttons would stretch across the page (a full-width
        # "Cancel" with nothing to cancel): this spacer takes the room instead.
        row.addStretch(0)
        row.addWidget(self.download_button)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self.downloads = EmbeddingDownload(
            context,
            download,
            progress=self.progress,
            status=self.status,
            button=self.download_button,
            fail=self._fail,
            parent=self,
        )
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build_list(self) -> QWidget:
        panel = QWidget()
        column = QVBoxLayout(panel)
        column.setContentsMargins(0, 0, 0, 0)
        self.collection_list = QListWidget()
        self.collection_list.setAccessibleName(self.tr("Document collections"))
        self.collection_list.currentItemChanged.connect(lambda *_: self._show_selected())
        self.new_button = QPushButton(icon("new-chat"), self.tr("New collection…"))
        self.new_button.setAccessibleName(self.tr("Create a document collection"))
        self.new_button.clicked.connect(self._ask_new)
        self.remove_button = QPushButton(icon("delete"), self.tr("Remove"))
        self.remove_button.setAccessibleName(
            self.tr("Remove the collection's index (your files are kept)")
        )
        self.remove_button.clicked.connect(self._remove_selected)
        column.addWidget(self.collection_list, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.remove_button)
        column.addLayout(buttons)
        return panel

    def _build_details(self) -> QWidget:
        panel = QWidget()
        column = QVBoxLayout(panel)
        column.setContentsMargins(8, 0, 0, 0)
        self.summary = FitLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.roots = QListWidget()
        self.roots.setAccessibleName(self.tr("Folders and files in this collection"))
        self.skipped = QTreeWidget()
        self.skipped.setAccessibleName(self.tr("Skipped files and why"))
        self.skipped.setHeaderLabels([self.tr("Skipped file"), self.tr("Reason")])
        self.skipped.setRootIsDecorated(False)
        buttons = QHBoxLayout()
        self.add_folder_button = QPushButton(icon("import"), self.tr("Add folder…"))
        self.add_folder_button.setAccessibleName(self.tr("Add a folder to the collection"))
        self.add_folder_button.clicked.connect(self._ask_folder)
        self.add_files_button = QPushButton(icon("import"), self.tr("Add files…"))
        self.add_files_button.setAccessibleName(self.tr("Add files to the collection"))
        self.add_files_button.clicked.connect(self._ask_files)
        self.reindex_button = QPushButton(icon("regenerate"), self.tr("Re-index"))
        self.reindex_button.setAccessibleName(
            self.tr("Re-index the collection (only changed files are read)")
        )
        self.reindex_button.clicked.connect(self._reindex_selected)
        for button in (self.add_folder_button, self.add_files_button, self.reindex_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        column.addWidget(self.summary)
        # Chinese documents in an English-only model's collection: said, with what to use.
        self.language_hint = FitLabel()
        self.language_hint.setObjectName("Banner")
        self.language_hint.setVisible(False)
        self._hinted: str | None = None  # the collection the hint is about
        column.addWidget(self.language_hint)
        column.addLayout(buttons)
        column.addWidget(QLabel(self.tr("Sources")))
        column.addWidget(self.roots, 1)
        column.addWidget(QLabel(self.tr("Skipped")))
        column.addWidget(self.skipped, 1)
        return panel

    # ------------------------------------------------------------------ state
    @property
    def embedding_model(self) -> str:
        """The embedding model new collections are built with (from the settings)."""
        return str(self._context.settings.embedding_model or DEFAULT_EMBEDDING_MODEL)

    @property
    def is_indexing(self) -> bool:
        """Whether a collection is being indexed now."""
        return self._worker is not None

    def names(self) -> list[str]:
        """The collections' names, as listed."""
        return list(self._infos)

    def selected_name(self) -> str | None:
        """The selected collection's name, if any."""
        item = self.collection_list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def changed_on_disk(self) -> None:
        """The database changed (this window or another process): list the collections
        again if they are not the ones shown (not while this screen indexes)."""
        if self.is_indexing:
            return
        try:
            infos = self._context.library.collections()
        except EdgeDeskError:
            return  # the next look (or the user's) says what is wrong
        if {info.name: info for info in infos} != self._infos:
            self.refresh()

    def refresh(self, select: str | None = None) -> None:
        """Re-read the collections from the database and show them."""
        keep = select or self.selected_name()
        try:
            infos = self._context.library.collections()
        except EdgeDeskError as exc:
            self._fail(error_text(exc))
            infos = []
        self._infos = {info.name: info for info in infos}
        if self.isVisible():
            self._say_model()
        else:  # shown on the screen's first showing; no model lookups while the window opens
            self.model_label.setText(
                self.tr("New collections are embedded with ") + self.embedding_model
            )
        self.collection_list.blockSignals(True)
        self.collection_list.clear()
        for info in infos:
            item = QListWidgetItem(icon("documents"), info.name)
            item.setData(Qt.ItemDataRole.UserRole, info.name)
            item.setToolTip(self._documents(info.documents))
            self.collection_list.addItem(item)
            if info.name == keep:
                self.collection_list.setCurrentItem(item)
        if self.collection_list.currentItem() is None and infos:
            self.collection_list.setCurrentRow(0)
        self.collection_list.blockSignals(False)
        self._show_selected()
        self.collections_changed.emit()

    def _show_selected(self) -> None:
        name = self.selected_name()
        # The language hint belongs to the collection it was given for.
        hinted = self._hinted
        self.language_hint.setVisible(
            hinted is not None and (name == hinted or hinted not in self._infos)
        )
        info = self._infos.get(name) if name else None
        has = info is not None
        for button in (
            self.add_folder_button,
            self.add_files_button,
            self.reindex_button,
            self.remove_button,
        ):
            button.setEnabled(has and not self.is_indexing)
        self.roots.clear()
        self.skipped.clear()
        if info is None:
            self.summary.setText(
                self.tr(
                    "Create a collection, then add folders or files to "
                    "ask questions about them in a chat."
                )
            )
            return
        # Plain text: the name is the user's. The separator is the language's own comma.
        self.summary.setText(
            f"{info.name} — "
            + self._documents(info.documents)
            + self.tr(", ")
            + self._chunks(info.chunks)
            + " · "
            + self.tr("embedding model: ")
            + str(info.embedding_model)
        )
        self._list_sources(info)
        for skipped in info.skipped:
            reason = skip_reason_text(skipped.reason)
            item = QTreeWidgetItem([skipped.path, reason])
            item.setToolTip(0, literal_tooltip(skipped.path))
            item.setToolTip(1, literal_tooltip(reason))
            self.skipped.addTopLevelItem(item)
        self.skipped.resizeColumnToContents(0)

    # ------------------------------------------------------------------ actions
    def _list_sources(self, info: CollectionInfo) -> None:
        """Each folder or file added, and under a folder the files indexed from it (it
        listed only the folder)."""
        files = list(info.files)
        for root in info.roots:
            self.roots.addItem(root)
            inside = [f for f in files if f.startswith(root.rstrip("/\\") + os.sep)]
            for path in inside:
                item = QListWidgetItem("    " + os.path.relpath(path, root))
                item.setToolTip(literal_tooltip(path))
                self.roots.addItem(item)
            taken = set(inside)
            files = [f for f in files if f not in taken]
        more = info.documents - len(info.files)
        if more > 0:
            self.roots.addItem(self.tr("… and %1 more files").replace("%1", str(more)))

    def showEvent(self, event: QShowEvent) -> None:
        """Name the embedding model a new collection would get now (models may have come
        or gone since the screen was last shown)."""
        self._say_model()
        super().showEvent(event)

    def _say_model(self) -> None:
        """The model the New collection dialog preselects: one on disk if there is one
        (the settings' default was named even when it was not downloaded)."""
        choices = embedding_choices(self._context)
        first = choices[0] if choices else None
        if first is not None and first.installed:
            text = self.tr("New collections are embedded with ") + first.ref
        elif first is not None and self._context.net.refusal(download=True) is not None:
            # Offline (or policy): promising a download here would be promising a refusal.
            text = self.tr(
                "No embedding model is on this device, and downloads are off here: "
                "import one on the Models screen."
            )
        elif first is not None:
            text = (
                self.tr(
                    "No embedding model is on this device yet: a new collection "
                    "downloads %1 (%2) first."
                )
                .replace("%1", first.ref)
                .replace("%2", human_size(first.size_bytes))
            )
        else:
            text = self.tr("No embedding model is available: import one on the Models screen.")
        self.model_label.setText(text)

    def _documents(self, count: int) -> str:
        """ "1 document", "4 documents" (not "4 document(s)")."""
        return (
            self.tr("1 document")
            if count == 1
            else self.tr("%1 documents").replace("%1", str(count))
        )

    def _chunks(self, count: int) -> str:
        """ "1 chunk", "4 chunks"."""
        return self.tr("1 chunk") if count == 1 else self.tr("%1 chunks").replace("%1", str(count))

    def new_collection_dialog(self) -> NewCollectionDialog:
        """The New collection dialog, offering this machine's embedding models."""
        choices = embedding_choices(self._context)
        dialog = NewCollectionDialog(
            choices,
            self,
            importer=embedding_importer(self._context),
            refusal=download_refusal(self._context.effective),
        )
        # The settings' model when it is here (else the first that is: see the choices).
        if any(c.ref == self.embedding_model and c.installed for c in choices):
            dialog.select(self.embedding_model)
        return dialog

    def _ask_new(self) -> None:
        dialog = self.new_collection_dialog()
        if dialog.exec() != NewCollectionDialog.DialogCode.Accepted:
            return
        picked = dialog.choice()
        if picked is None:
            return
        folder = QFileDialog.getExistingDirectory(self, self.tr("Add a folder"))
        # No folder (the picker closed): the collection is still made, empty, so that
        # files can be added to it (Add files…); dropping what the user just named would
        # look like a failure that says nothing.
        self.add(picked[0], [Path(folder)] if folder else [], picked[1].ref)

    def _ask_folder(self) -> None:
        target = self.selected_name()
        if not target:
            return
        folder = QFileDialog.getExistingDirectory(self, self.tr("Add a folder"))
        if folder:
            self.add(target, [Path(folder)])

    def _ask_files(self) -> None:
        target = self.selected_name()
        if not target:
            return
        names, _ = QFileDialog.getOpenFileNames(
            self,
            self.tr("Add files"),
            "",
            self.tr("Documents (*.pdf *.docx *.txt *.md *.html *.htm *.csv *.json);;All files (*)"),
        )
        if names:
            self.add(target, [Path(n) for n in names])

    def _reindex_selected(self) -> None:
        name = self.selected_name()
        if name:
            self.reindex(name)

    def _remove_selected(self) -> None:
        name = self.selected_name()
        if name is None or self.is_indexing:
            return
        try:
            removed = self._context.library.remove(name)
        except EdgeDeskError as exc:
            self._fail(error_text(exc))
            return
        if removed:  # its name only (as a key's scope names it), never a document's text
            self._context.audit.record("collection.removed", collection=name, source="window")
        self.status.setText(
            self.tr("Removed the index of ") + name + self.tr(" (your files are untouched)")
        )
        self.refresh()

    def add(self, name: str, paths: Sequence[Path], model: str | None = None) -> IndexWorker | None:
        """Add ``paths`` to collection ``name`` (created if new, embedded with ``model`` or
        the settings' model) and index it on a worker.

        None when it cannot start now; when the embedding model is a catalog model not
        downloaded yet, its download is offered and the indexing follows it.
        """
        library = self._context.library
        # Only a new collection gets a model: naming another model for an existing one
        # would throw its vectors away and re-embed everything.
        info = self._infos.get(name)
        chosen = None if info is not None else (model or self.embedding_model)
        needed = str(info.embedding_model) if info is not None else str(chosen)
        self._hint_language(name, needed, paths)
        if self.downloads.offer(needed, name, lambda: self.add(name, paths, model)):
            return None

        def task(progress: Callable[[object], None], cancel: threading.Event) -> object:
            return library.add(name, paths, chosen, progress=progress, cancel=cancel)

        return self._start(name, task)

    def _hint_language(self, name: str, model: str, paths: Sequence[Path]) -> None:
        """Recommend the multilingual model when Chinese documents go to a collection
        whose model knows English only (a bounded look at names and first files)."""
        show = lacks_chinese(self._context.catalog, model) and folder_has_cjk(paths)
        self._hinted = name if show else None
        if show:
            self.language_hint.setText(
                self.tr(
                    "%1 understands English only, and these documents have Chinese names "
                    "or text: searches will miss much of them. For Chinese documents, make a "
                    "collection with %2 (multilingual) on New collection…"
                )
                .replace("%1", model)
                .replace("%2", MULTILINGUAL_MODEL)
            )
        self.language_hint.setVisible(show)

    def reindex(self, name: str) -> IndexWorker | None:
        """Bring ``name`` in line with the disk on a worker (unchanged files are not read)."""
        library = self._context.library
        info = self._infos.get(name)
        if info is not None and self.downloads.offer(
            str(info.embedding_model), name, lambda: self.reindex(name)
        ):
            return None

        def task(progress: Callable[[object], None], cancel: threading.Event) -> object:
            return library.rescan(name, progress=progress, cancel=cancel)

        return self._start(name, task)

    def download_offered(self) -> DownloadWorker | None:
        """Download the embedding model offered; the indexing waiting for it follows."""
        return self.downloads.download_offered()

    def _start(
        self, name: str, task: Callable[[Callable[[object], None], threading.Event], object]
    ) -> IndexWorker | None:
        if self._worker is not None:
            self._fail(self.tr("Wait for the current indexing to finish, or cancel it."))
            return None
        worker = IndexWorker(task, name)
        worker.progress.connect(self._on_progress)
        worker.report.connect(self._on_report)
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_done)
        self._worker = worker
        self.progress.setRange(0, 0)  # busy until the files are counted
        self.progress.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.status.setText(self.tr("Indexing ") + name + "…")
        self._show_selected()
        self._pool.start(worker)
        return worker

    def cancel(self) -> None:
        """Stop indexing after the current file; what is indexed stays searchable."""
        if self._worker is not None:
            self._worker.cancel()
            self.status.setText(self.tr("Cancelling…"))

    def _on_progress(self, name: str, update: IndexProgress) -> None:
        if update.waiting:  # a terminal (or another window) is indexing this collection
            self.progress.setRange(0, 0)
            self.status.setText(
                self.tr("%1: waiting for another indexing of this collection to finish…").replace(
                    "%1", name
                )
            )
            return
        self.progress.setRange(0, max(1, update.files_total))
        self.progress.setValue(update.files_done)
        shown = Path(update.path).name if update.path else ""
        self.status.setText(f"{name}: {update.files_done}/{update.files_total} {shown}")

    def _on_report(self, name: str, report: IndexReport) -> None:
        text = (
            f"{name}: "
            + self.tr("%n added", "", report.added)
            + ", "
            + self.tr("%n updated", "", report.updated)
            + ", "
            + self.tr("%n unchanged", "", report.unchanged)
            + ", "
            + self.tr("%n removed", "", report.removed)
            + ", "
            + self.tr("%n skipped", "", len(report.skipped))
        )
        if report.cancelled:
            text += " — " + self.tr("cancelled")
        self.status.setText(text)
        self.refresh(select=name)
        self.indexing_finished.emit(report)

    def _on_failed(self, name: str, message: str) -> None:
        self._fail(f"{name}: {message}")
        self.refresh(select=name)

    def _on_done(self) -> None:
        self._worker = None
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)
        self._show_selected()

    def _fail(self, message: str) -> None:
        self.status.setText(message)
        self.error.emit(message)

    def shutdown(self) -> None:
        """Stop indexing (window closing); files already indexed are kept."""
        self.cancel()
