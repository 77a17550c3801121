"""The line under a chat's transcript: notices, and Download for a missing embedding model.

A grounded chat whose collection's embedding model is not downloaded gets the model
offered here (with its size); once it is in, ``model_arrived`` names the chat whose
question waits for it. Window's thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from desktop.chat import Conversation
from desktop.ui.common.look import icon
from desktop.ui.common.qmodels import human_size
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.common.workers import DownloadWorker

if TYPE_CHECKING:
    from desktop.catalog import Catalog

Download = Callable[[str], DownloadWorker | None]  # the Models screen's ``download``
Refusal = Callable[[], str | None]  # why no download may start now (offline…), or None
UNDO_MS = 10_000  # how long Undo is offered after a chat is deleted


class ChatNotice(QWidget):
    """A notice (plain text) and, when a model is missing, a Download button for it; after
    a deletion, Undo for a few seconds (or until ``withdraw_undo``: the next action)."""

    model_arrived = Signal(object)  # the Conversation whose question waited for the model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._catalog: Catalog | None = None
        self._download: Download | None = None  # set by ``offer_downloads``
        self._refusal: Refusal = lambda: None
        self._offer: tuple[Conversation, str] | None = None  # a chat, the model it lacks
        self.notice = FitLabel()  # plain text: it may quote names from user data
        self.notice.setObjectName("Muted")
        self.notice.setVisible(False)
        self.download_button = QPushButton(icon("import"), self.tr("Download"))
        self.download_button.setAccessibleName(self.tr("Download the embedding model"))
        self.download_button.clicked.connect(self.download_offered)
        self.download_button.setVisible(False)
        self.undo_button = QPushButton(self.tr("Undo"))
        self.undo_button.setVisible(False)
        self.undo_button.clicked.connect(self._undo_clicked)
        self._undo: Callable[[], None] | None = None
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.setInterval(UNDO_MS)
        self._undo_timer.timeout.connect(self.withdraw_undo)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.notice, 1)
        row.addWidget(self.download_button)
        row.addWidget(self.undo_button)

    def offer_downloads(
        self, catalog: Catalog, download: Download, refusal: Refusal | None = None
    ) -> None:
        """Offer missing catalog models for ``download`` (without it: only a notice);
        while ``refusal`` gives a reason (offline…), Download is disabled and says it."""
        self._catalog, self._download = catalog, download
        self._refusal = refusal or (lambda: None)

    @property
    def can_download(self) -> bool:
        """Whether a missing model can be offered for download here."""
        return self._download is not None

    def say(self, text: str) -> None:
        """Show ``text`` as the notice (an Undo offered for an earlier one is withdrawn:
        the line is about something else now)."""
        self.withdraw_undo()
        self._show(text, "Muted")

    def warn(self, text: str) -> None:
        """Show ``text`` as the notice in the error colour: something the user asked for
        failed (the window walk found errors in the grey of "Downloading…")."""
        self.withdraw_undo()
        self._show(text, "Error")

    def _show(self, text: str, style: str) -> None:
        if self.notice.objectName() != style:
            self.notice.setObjectName(style)
            # A style sheet matches names when it polishes a widget: polish it again.
            self.notice.style().unpolish(self.notice)
            self.notice.style().polish(self.notice)
        self.notice.setText(text)
        self.notice.setVisible(True)

    def clear(self) -> None:
        """Hide the notice and withdraw any offer (a new answer starts)."""
        self.notice.setVisible(False)
        self.download_button.setVisible(False)
        self._offer = None
        self.withdraw_undo()

    def offer_undo(self, text: str, undo: Callable[[], None]) -> None:
        """Say ``text`` with Undo beside it, which calls ``undo``, for a few seconds."""
        self.say(text)  # withdraws an earlier offer first
        self._undo = undo
        self.undo_button.setAccessibleName(self.tr("Undo: %1").replace("%1", text))
        self.undo_button.setVisible(True)
        self._undo_timer.start()

    @property
    def can_undo(self) -> bool:
        """Whether Undo is offered now."""
        return self._undo is not None

    def withdraw_undo(self) -> None:
        """No more Undo (its time is up, or the user went on); its notice goes too."""
        if self._undo is None:
            return
        self._undo = None
        self._undo_timer.stop()
        self.undo_button.setVisible(False)
        self.notice.setVisible(False)

    def _undo_clicked(self) -> None:
        undo = self._undo
        self.withdraw_undo()
        if undo is not None:
            undo()

    def offer(self, chat: Conversation, model: str) -> None:
        """Say which embedding model the chat's collection lacks and offer Download."""
        self._offer = (chat, model)
        entry = self._catalog.find(model) if self._catalog is not None else None
        size = entry.quant().size if entry is not None else None
        text = (
            self.tr(
                "The collection %1 needs the embedding model %2, which is not "
                "downloaded yet%3. Download it, then the answer follows."
            )
            .replace("%1", chat.collection)
            .replace("%2", model)
            .replace("%3", f" ({human_size(size)})" if size else "")
        )
        refusal = self._refusal()
        if refusal is not None:  # not "Download it": the button cannot, and this says why
            text = (
                self.tr("The collection %1 needs the embedding model %2, which is not downloaded.")
                .replace("%1", chat.collection)
                .replace("%2", model)
                + " "
                + refusal
            )
        self.say(text)
        self.download_button.setVisible(True)
        self.download_button.setEnabled(refusal is None)
        self.download_button.setToolTip(refusal or "")

    def download_offered(self) -> DownloadWorker | None:
        """Download the model offered; ``model_arrived`` follows once it is in."""
        if self._offer is None or self._download is None:
            return None
        model = self._offer[1]
        worker = self._download(model)
        if worker is None:
            return None  # offline, blocked…: the Models screen said why
        self.download_button.setEnabled(False)
        self.say(self.tr("Downloading %1…").replace("%1", model))
        worker.installed.connect(self._on_model_downloaded)
        worker.paused.connect(self._on_model_download_stopped)
        worker.failed.connect(self._on_model_download_failed)
        return worker

    def _on_model_downloaded(self, ref: str, _model: object) -> None:
        offer = self._offer
        if offer is None or offer[1] != ref:
            return
        self.clear()
        self.model_arrived.emit(offer[0])

    def _on_model_download_stopped(self, ref: str) -> None:
        if self._offer is not None and self._offer[1] == ref:
            self.download_button.setEnabled(True)
            self.say(
                self.tr("The download of %1 is paused; Download resumes it.").replace("%1", ref)
            )

    def _on_model_download_failed(self, ref: str, message: str) -> None:
        if self._offer is not None and self._offer[1] == ref:
            self.download_button.setEnabled(True)
            self.say(f"{ref}: {message}")
