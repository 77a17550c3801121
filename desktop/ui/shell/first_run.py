"""First-run setup: recommend a model that fits this machine, download it, land in a chat.

Offered only when nothing is installed and there are no chats, and never again once it
was finished or skipped (remembered in ``first_run.json`` in the data folder). The
download itself is the Models screen's (same worker, same progress, pause and resume).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.catalog import CatalogRow, Hardware, Progress, Verdict
from desktop.ui.common.core_text import machine_summary, verdict_text
from desktop.ui.common.qmodels import human_size
from desktop.ui.common.text_fit import FitLabel, TextFitDialog
from desktop.ui.models.view import ModelsView

STATE_FILE = "first_run.json"
# On a GPU the best GLM that fits is worth it up to about this size; on a CPU a small
# model answers at reading speed where a 9B one would not.
GPU_RECOMMEND_MAX_BYTES = 7 * 1024**3


def recommend(rows: Sequence[CatalogRow]) -> CatalogRow | None:
    """The chat model to suggest: a GLM that fits (the largest on a GPU, else the smallest)."""
    fitting = [
        r
        for r in rows
        if r.kind == "chat" and r.fit != str(Verdict.NO) and r.recommended_quant and r.size_bytes
    ]
    glm = [r for r in fitting if r.family == "glm"] or fitting
    on_gpu = [
        r
        for r in glm
        if r.fit == str(Verdict.GPU) and (r.size_bytes or 0) <= GPU_RECOMMEND_MAX_BYTES
    ]
    if on_gpu:
        return max(on_gpu, key=lambda r: r.size_bytes or 0)
    return min(glm, key=lambda r: r.size_bytes or 0) if glm else None


def state_path(data_dir: Path) -> Path:
    """Where the first-run outcome is remembered."""
    return data_dir / STATE_FILE


def is_settled(data_dir: Path) -> bool:
    """Whether first-run setup was finished or skipped before."""
    return state_path(data_dir).exists()


def settle(data_dir: Path, outcome: str, model: str | None = None) -> None:
    """Remember that first-run setup ended (``installed`` or ``skipped``)."""
    state_path(data_dir).write_text(
        json.dumps({"outcome": outcome, "model": model, "at": time.time()}), encoding="utf-8"
    )


class FirstRunDialog(TextFitDialog):
    """Welcome, the recommended model, Download and start, or Skip (window thread).

    Every label wraps and the dialog grows to fit it, in any language."""

    ready = Signal(str)  # the installed model's reference

    def __init__(
        self,
        models: ModelsView,
        data_dir: Path,
        hardware: Hardware | str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._models = models
        self._data_dir = data_dir
        rows = [models.table_model.row_at(n) for n in range(models.table_model.rowCount())]
        self.recommended = recommend(rows)
        self.setWindowTitle(self.tr("Welcome to EdgeDesk"))
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        title = QLabel(self.tr("Let's get a model onto this machine"))
        title.setObjectName("Title")
        title.setWordWrap(True)
        layout.addWidget(title)
        if isinstance(hardware, Hardware):  # said in the window's language
            hardware = machine_summary(hardware)
        self.machine = QLabel(self.tr("This machine: ") + hardware)
        machine = self.machine
        machine.setObjectName("Muted")
        machine.setWordWrap(True)
        layout.addWidget(machine)
        self.choice = QLabel()
        self.choice.setWordWrap(True)
        layout.addWidget(self.choice)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName(self.tr("Download progress"))
        self.progress.setVisible(False)
        layout.addWidget(self.progress)
        self.status = FitLabel()
        self.status.setObjectName("Muted")
        layout.addWidget(self.status)
        layout.addLayout(self._build_buttons())
        models.error.connect(self._on_error)
        models.imported.connect(self._on_imported)
        self._listening = True  # to the Models screen's imports and errors, while open
        self._errors: list[str] = []  # said here and in the Models bar: gone with the dialog
        self.finished.connect(self._forget_errors)
        self.finished.connect(self._stop_listening)
        self._describe()

    def _build_buttons(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        self.skip_button = QPushButton(self.tr("Skip"))
        self.skip_button.setAccessibleName(self.tr("Skip setup (choose a model later)"))
        self.skip_button.clicked.connect(self.skip)
        self.start_button = QPushButton(self.tr("Download and start"))
        self.start_button.setObjectName("Primary")
        self.start_button.setAccessibleName(self.tr("Download the recommended model"))
        self.start_button.clicked.connect(self.start)
        self.import_button = QPushButton(self.tr("Import a file I have…"))
        self.import_button.setAccessibleName(self.tr("Import a GGUF model file from this computer"))
        self.import_button.clicked.connect(self.ask_import)
        buttons.addWidget(self.import_button)
        buttons.addStretch(1)
        buttons.addWidget(self.skip_button)
        buttons.addWidget(self.start_button)
        return buttons

    def ask_import(self) -> None:
        """Pick a GGUF already on this computer; it is imported and chosen for the chat."""
        chosen = self._models.ask_files(self)
        if chosen:
            self.say(self.status, self.tr("Importing ") + chosen[0].name + "…")
            self._models.import_later(*chosen)

    def _on_imported(self, ref: str) -> None:
        self._models.when_listed(lambda: self._imported_listed(ref))

    def _imported_listed(self, ref: str) -> None:
        # An embedding model imported here would close the welcome with nothing to chat
        # with (the chat's picker empty, sending refused): say so and stay open.
        if ref not in {model for _name, model in self._models.chat_models()}:
            self.say(
                self.status,
                self.tr(
                    "%1 cannot chat (an embedding model, say). Import a chat model, "
                    "or download the recommended one."
                ).replace("%1", ref),
            )
            return
        settle(self._data_dir, "installed", ref)
        self._ready(ref)

    def _stop_listening(self) -> None:
        # The window keeps this dialog: still connected, a later import on the Models
        # screen (an embedding model, say) would be "ready" and become the chat's model.
        if self._listening:
            self._listening = False
            self._models.error.disconnect(self._on_error)
            self._models.imported.disconnect(self._on_imported)

    def _forget_errors(self) -> None:
        for message in self._errors:
            self._models.forget_error(message)

    def _describe(self) -> None:
        row = self.recommended
        if row is None:
            self.say(
                self.choice,
                self.tr(
                    "No catalog model fits this machine. Import a GGUF "
                    "file on the Models screen instead."
                ),
            )
            self.start_button.setEnabled(False)
            return
        self.say(
            self.choice,
            self.tr("Recommended: ") + f"<b>{row.name}</b> "
            f"({row.recommended_quant}, {human_size(row.size_bytes)}) — " + verdict_text(row.fit),
        )
        # Offline or downloads off: the button would only refuse after a click; it is
        # off, and says why and where to undo it (importing a file still works).
        refusal = self._models.download_refusal()
        self.start_button.setEnabled(refusal is None)
        self.start_button.setToolTip(refusal or "")
        if refusal is not None:
            self.say(self.status, refusal)

    def start(self) -> None:
        """Download the recommended model (resumes if a previous try was paused)."""
        row = self.recommended
        if row is None:
            return
        self.start_button.setEnabled(False)
        self.say(self.status, self.tr("Starting the download…"))
        worker = self._models.download(row.id)
        if worker is None:
            self.start_button.setEnabled(True)
            return
        worker.progress.connect(self._on_progress)
        worker.installed.connect(self._on_installed)
        worker.paused.connect(self._on_paused)
        worker.failed.connect(self._on_failed)
        self.progress.setVisible(True)

    def skip(self) -> None:
        """Close without a model (a running download is paused) and don't offer again."""
        if self.recommended is not None:
            self._models.pause(self.recommended.id)
        settle(self._data_dir, "skipped")
        self.reject()

    def _on_progress(self, _ref: str, progress: Progress) -> None:
        share = progress.done / progress.total if progress.total else 0.0
        self.progress.setValue(int(share * 1000))
        self.say(
            self.status,
            f"{share:.0%} · {human_size(int(progress.speed_bps))}/s"
            + (f" · {progress.eta_s:.0f} s" if progress.eta_s is not None else ""),
        )

    def _on_installed(self, ref: str, _model: object) -> None:
        settle(self._data_dir, "installed", ref)
        self.progress.setValue(1000)
        self.say(self.status, self.tr("Installed and verified: ") + ref)
        # The Models screen re-lists on a worker (it heard ``installed`` first): the chat
        # can offer the model once its row says installed.
        self._models.when_listed(lambda: self._ready(ref))

    def _ready(self, ref: str) -> None:
        self.ready.emit(ref)
        self.accept()

    def _on_paused(self, _ref: str) -> None:
        self.start_button.setEnabled(True)
        self.start_button.setText(self.tr("Resume download"))

    def _on_failed(self, _ref: str, message: str) -> None:
        self._on_error(message)

    def _on_error(self, message: str) -> None:
        self._errors.append(message)
        self.say(self.status, message)
        self.start_button.setEnabled(self.recommended is not None)
