"""Downloads of the Models screen: start, pause, resume and cancel, one worker per model.

Pause keeps the ``.part`` files, so Download continues from the bytes kept; Cancel stops
the worker and then deletes every partial file of the model on another worker. Strings
are translated in the "ModelsView" context (a literal in each call, so lupdate finds
them): they are the Models screen's words.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtWidgets import QLabel, QProgressBar

from desktop.base.errors import EdgeDeskError
from desktop.base.filebytes import format_bytes
from desktop.catalog import (
    CatalogRow,
    Progress,
    PullTarget,
    discard_partial,
    model_id_for,
    parse_target,
    partial_files,
    pull,
    quant_of,
)
from desktop.ui.common.error_text import error_text
from desktop.ui.common.net_mode import SettingsInForce, download_refusal
from desktop.ui.common.qmodels import CatalogTableModel, human_size
from desktop.ui.common.workers import DownloadWorker, TaskWorker, WorkerPool

if TYPE_CHECKING:
    from desktop.base.config import Paths
    from desktop.base.net import NetGate
    from desktop.catalog import Catalog, Downloader, HubClient, InstalledIndex


class DownloadSources(SettingsInForce, Protocol):
    """What the Models screen's downloads read; asked at each download, so a Hub client
    or gate settings changed meanwhile (offline, endpoint, proxy) apply to the next one."""

    @property
    def paths(self) -> Paths:
        """Where models go."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog (what a reference names)."""

    @property
    def installed(self) -> InstalledIndex:
        """Downloaded and imported models."""

    @property
    def net(self) -> NetGate:
        """The gate for outbound connections (offline mode, downloads allowed)."""

    @property
    def hub(self) -> HubClient:
        """Hub metadata."""

    def downloader(self, **options: Any) -> Downloader:
        """A downloader carrying the Hub token."""


class ModelDownloads(QObject):
    """Runs the Models screen's downloads; shows their state in its table, bar and label."""

    changed = Signal()  # a download started, stopped or was cancelled: update the buttons
    settled = Signal()  # files on disk changed (installed, cancelled): rebuild the rows
    error = Signal(str)

    def __init__(
        self,
        context: DownloadSources,
        pool: WorkerPool,
        table: CatalogTableModel,
        *,
        bar: QProgressBar,
        status: QLabel,
        installed: Callable[[str], object | None],
    ) -> None:
        super().__init__()
        self._context = context
        self._pool = pool
        self._table = table
        self._bar = bar
        self._status = status
        self._is_installed = installed
        self.running: dict[str, DownloadWorker] = {}
        self._targets: dict[str, PullTarget] = {}  # the quant each download fetches
        self._cancelling: set[str] = set()  # stopping, then deleting the partial files

    def hub_rows(self, shown: set[str], unfinished: Sequence[str]) -> list[CatalogRow]:
        """Rows for downloads from Hub search (``REPO:FILE``) that no other row shows:
        running, cancelling, or left paused by this or an earlier session (``unfinished``:
        ``catalog._pull.unfinished_pulls``, read by the listing worker)."""
        # A stopped download is listed only while its part is on disk (resumable): a
        # failed one that kept nothing has nothing to offer.
        refs = [*self.running, *self._cancelling, *unfinished]
        rows: list[CatalogRow] = []
        for ref in dict.fromkeys(refs):
            if ref in shown or ":" not in ref:
                continue
            repo, name = ref.split(":", 1)
            rows.append(
                CatalogRow(
                    id=ref,
                    name=model_id_for(name),  # the id it gets once in, as imports show
                    family="other",
                    kind="—",
                    tier="hub",
                    repo=repo,
                    recommended_quant=quant_of(name),
                    size_bytes=None,
                    fit="—",
                    installed=None,
                )
            )
            if ref not in self.running and ref not in self._cancelling:
                self._table.set_status(ref, QCoreApplication.translate("ModelsView", "paused"))
        return rows

    def is_cancelling(self, ref: str) -> bool:
        """Whether the download of ``ref`` is being stopped and its partial files deleted."""
        return ref in self._cancelling

    def cancellable(self, ref: str) -> bool:
        """A download of ``ref`` runs, or one left partial files (paused, interrupted)."""
        if ref in self._cancelling:
            return False
        if ref in self.running:
            return True
        ctx = self._context
        try:
            target = self._targets.get(ref) or parse_target(ref, ctx.catalog)
        except EdgeDeskError:
            return False  # an imported file or a local model: nothing is downloading
        return bool(partial_files(target, index=ctx.installed, models_dir=ctx.paths.models_dir))

    def start(self, ref: str, quant: str | None = None) -> DownloadWorker | None:
        """Download (or resume) ``ref`` on a worker; None if it cannot start now."""
        if ref in self.running:
            return self.running[ref]
        if ref in self._cancelling:
            self._status.setText(
                QCoreApplication.translate(
                    "ModelsView", "Still deleting the cancelled download of "
                )
                + ref
            )
            return None
        ctx = self._context
        refusal = download_refusal(ctx.effective)
        if refusal is not None:  # its cause's remedy, not always "untick Offline"
            self.error.emit(refusal)
            return None
        try:
            target = parse_target(ref, ctx.catalog, quant)
            ctx.net.ensure_online(f"download {ref}", download=True)
        except EdgeDeskError as exc:
            self.error.emit(error_text(exc))
            return None

        def task(progress: Callable[[object], None], cancel: threading.Event) -> object:
            return pull(
                target,
                hub=ctx.hub,
                downloader=ctx.downloader(),
                index=ctx.installed,
                models_dir=ctx.paths.models_dir,
                progress=progress,
                cancel=cancel,
            )

        worker = DownloadWorker(task, ref)
        worker.progress.connect(self._on_progress)
        worker.installed.connect(self._on_installed)
        worker.paused.connect(self._on_paused)
        worker.failed.connect(self._on_failed)
        self.running[ref] = worker
        self._targets[ref] = target
        self._table.set_status(ref, QCoreApplication.translate("ModelsView", "starting…"))
        self._pool.start(worker)
        self.changed.emit()
        return worker

    def pause(self, ref: str) -> None:
        """Stop the download of ``ref``; starting it again resumes from the bytes kept."""
        worker = self.running.get(ref)
        if worker is not None:
            worker.cancel()

    def cancel(self, ref: str) -> None:
        """Stop the download of ``ref`` (running or paused) and delete its partial files.

        A running download is stopped first; its files go once the worker has let go of
        them (``_on_paused``), on a worker thread, so the window never waits on the disk.
        """
        if ref in self._cancelling:
            return
        self._cancelling.add(ref)
        self._table.set_status(ref, QCoreApplication.translate("ModelsView", "cancelling…"))
        self.changed.emit()
        worker = self.running.get(ref)
        if worker is not None:
            worker.cancel()
        else:
            self._discard(ref)

    def _discard(self, ref: str) -> None:
        ctx = self._context
        try:
            target = self._targets.get(ref) or parse_target(ref, ctx.catalog)
        except EdgeDeskError as exc:
            self._cancelling.discard(ref)
            self._fail(ref, error_text(exc))
            return

        def task() -> int:
            return discard_partial(
                target,
                downloader=ctx.downloader(),
                index=ctx.installed,
                models_dir=ctx.paths.models_dir,
            )

        worker = TaskWorker(task, ref)
        worker.result.connect(self._on_discarded)
        worker.failed.connect(self._on_discard_failed)
        self._pool.start(worker)

    def _on_discarded(self, ref: str, freed: object) -> None:
        self._cancelling.discard(ref)
        self._targets.pop(ref, None)
        self._bar.setVisible(False)
        if self._is_installed(ref) is not None:  # the pull finished before the cancel landed
            self._table.set_status(ref, "")
            self._status.setText(
                QCoreApplication.translate(
                    "ModelsView", "Finished before it could be cancelled; Remove deletes it: "
                )
                + ref
            )
        else:
            self._table.set_status(ref, QCoreApplication.translate("ModelsView", "cancelled"))
            size = format_bytes(freed if isinstance(freed, int) else 0)
            self._status.setText(
                QCoreApplication.translate(
                    "ModelsView", "Cancelled %1; deleted %2 of partial download"
                )
                .replace("%1", ref)
                .replace("%2", size)
            )
        self.settled.emit()

    def _on_discard_failed(self, ref: str, message: str) -> None:
        self._cancelling.discard(ref)
        self._table.set_status(ref, QCoreApplication.translate("ModelsView", "paused"))  # kept
        self.changed.emit()
        self.error.emit(message)

    def _on_progress(self, ref: str, progress: Progress) -> None:
        if ref not in self.running or ref in self._cancelling:
            return  # a report queued before a pause or cancel landed after it: that stands
        share = progress.done / progress.total if progress.total else 0.0
        eta = f" · {progress.eta_s:.0f} s" if progress.eta_s is not None else ""
        speed = human_size(int(progress.speed_bps)) + "/s"
        self._table.set_status(ref, f"{share:.0%}")
        self._bar.setVisible(True)
        self._bar.setValue(int(share * 1000))
        self._status.setText(f"{ref}: {share:.1%} · {speed}{eta}")

    def _on_paused(self, ref: str) -> None:
        self.running.pop(ref, None)
        if ref in self._cancelling:
            self._discard(ref)  # the worker has let go of the files: delete them now
            return
        self._table.set_status(ref, QCoreApplication.translate("ModelsView", "paused"))
        self.changed.emit()

    def _on_failed(self, ref: str, message: str) -> None:
        self.running.pop(ref, None)
        if ref in self._cancelling:
            self._discard(ref)  # failed while stopping: the user still wants it gone
            return
        self._fail(ref, message)
        self.changed.emit()

    def _on_installed(self, ref: str, _model: object) -> None:
        self.running.pop(ref, None)
        self._targets.pop(ref, None)
        self._cancelling.discard(ref)  # finished first: a complete model is kept
        self._table.set_status(ref, "")
        self._bar.setVisible(False)
        self._status.setText(
            QCoreApplication.translate("ModelsView", "Installed and verified: ") + ref
        )
        self.settled.emit()

    def _fail(self, ref: str, message: str) -> None:
        self._table.set_status(ref, "")
        self.error.emit(message)
