"""A collection's missing embedding model, offered for download before indexing.

When the model a collection is embedded with is a catalog model not on disk, the
Documents screen offers it (with its size) through the Models screen's downloads, and
the indexing the user asked for starts once it is installed. Window's thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton

from desktop.base.errors import EdgeDeskError, ModelNotFound
from desktop.ui.common.error_text import error_text
from desktop.ui.common.net_mode import SettingsInForce, download_refusal
from desktop.ui.common.qmodels import human_size
from desktop.ui.common.workers import DownloadWorker

if TYPE_CHECKING:
    from desktop.base.net import NetGate
    from desktop.catalog import Catalog, Progress
    from desktop.resolve import ModelResolver

Download = Callable[[str], DownloadWorker | None]  # the Models screen's ``download``
IndexStart = Callable[[], object]


class ModelSource(SettingsInForce, Protocol):
    """What offering an embedding model reads (asked each time: a rebuilt one is used)."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog (the download's size)."""

    @property
    def resolver(self) -> ModelResolver:
        """Model reference -> load plan (whether the model is on disk)."""

    @property
    def net(self) -> NetGate:
        """The gate for outbound connections (offline mode)."""


class EmbeddingDownload(QObject):
    """Offers, downloads and reports one embedding model; then starts the waiting indexing.

    Shows itself in the screen's progress bar, status line and Download button.
    """

    def __init__(
        self,
        context: ModelSource,
        download: Download | None,
        *,
        progress: QProgressBar,
        status: QLabel,
        button: QPushButton,
        fail: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._download = download
        self._progress, self._status, self._button = progress, status, button
        self._fail = fail
        # The model offered or coming, and the indexing the user asked for.
        self._offer: tuple[str, IndexStart] | None = None
        self._downloading: str | None = None

    def _not_downloaded(self, model: str) -> int | None:
        """The catalog size of ``model`` when it is a catalog model not on disk, else None."""
        ctx = self._context
        try:
            ctx.resolver.locate(model)
        except ModelNotFound:
            entry = ctx.catalog.find(model)
            return (entry.quant().size or 0) if entry is not None else None
        except EdgeDeskError:
            return None  # blocked or unreadable: the indexing worker says why
        return None

    def offer(self, model: str, name: str, then: IndexStart) -> bool:
        """Offer to download ``model`` when it is missing; True if it is (``then`` waits)."""
        size = self._not_downloaded(model)
        if size is None:
            return False
        if self._downloading == model:
            self._offer = (model, then)  # already coming: index once it is here
            return True
        self._offer = (model, then)
        if self._download is None:
            self._fail(
                self.tr("%1 needs the embedding model %2: download it on the Models screen first.")
                .replace("%1", name)
                .replace("%2", model)
            )
            return True
        refusal = download_refusal(self._context.effective)
        self._button.setVisible(True)
        self._button.setEnabled(refusal is None)
        self._button.setToolTip(refusal or "")
        if refusal is not None:  # not "Download it": the button cannot, and this says why
            self._status.setText(
                self.tr("%1 needs the embedding model %2, which is not downloaded.")
                .replace("%1", name)
                .replace("%2", model)
                + " "
                + refusal
            )
            return True
        self._status.setText(
            self.tr(
                "%1 needs the embedding model %2, which is not "
                "downloaded yet (%3). Download it, then the indexing "
                "starts."
            )
            .replace("%1", name)
            .replace("%2", model)
            .replace("%3", human_size(size))
        )
        return True

    def download_offered(self) -> DownloadWorker | None:
        """Download the embedding model offered; the indexing waiting for it follows."""
        if self._offer is None or self._download is None:
            return None
        model = self._offer[0]
        # Said here: the Models screen, which also says it, is not in view.
        refusal = download_refusal(self._context.effective)
        if refusal is not None:
            self._fail(refusal)
            return None
        try:
            self._context.net.ensure_online(f"download {model}", download=True)
        except EdgeDeskError as exc:
            self._fail(error_text(exc))
            return None
        worker = self._download(model)
        if worker is None:
            return None  # blocked by policy…: the Models screen said why (error signal)
        self._downloading = model
        self._button.setEnabled(False)
        worker.progress.connect(self._on_progress)
        worker.installed.connect(self._on_downloaded)
        worker.paused.connect(self._on_stopped)
        worker.failed.connect(self._on_failed)
        self._progress.setRange(0, 1000)
        self._progress.setValue(0)
        self._progress.setVisible(True)
        self._status.setText(self.tr("Downloading ") + model + "…")
        return worker

    def _on_progress(self, ref: str, progress: Progress) -> None:
        share = progress.done / progress.total if progress.total else 0.0
        self._progress.setValue(int(share * 1000))
        self._status.setText(f"{ref}: {share:.0%} · " + self.tr("downloading the embedding model"))

    def _on_downloaded(self, ref: str, _model: object) -> None:
        self._downloading = None
        self._progress.setVisible(False)
        self._button.setVisible(False)
        offer, self._offer = self._offer, None
        if offer is not None and offer[0] == ref:
            offer[1]()  # the indexing the user asked for

    def _on_stopped(self, ref: str) -> None:
        self._downloading = None
        self._progress.setVisible(False)
        self._button.setEnabled(True)
        self._status.setText(
            self.tr("The download of %1 is paused; Download resumes it.").replace("%1", ref)
        )

    def _on_failed(self, ref: str, message: str) -> None:
        self._downloading = None
        self._progress.setVisible(False)
        self._button.setEnabled(True)
        self._fail(f"{ref}: {message}")
