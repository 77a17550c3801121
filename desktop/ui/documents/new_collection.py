"""The New collection dialog: a name and the embedding model its documents are embedded with.

The models offered are the embedding models that can run now (the settings' default
first if it is on disk, catalog models on disk, pulled or imported files whose header
says "embedding") and, marked as such and after them, the catalog's embedding models not
downloaded yet: picking one of those
downloads it first (the Documents screen does that through the Models screen).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.defaults import DEFAULT_EMBEDDING_MODEL
from desktop.base.errors import EdgeDeskError, InvalidRequest, ModelNotFound
from desktop.ui.common.error_text import error_text
from desktop.ui.common.qmodels import human_size
from desktop.ui.common.text_fit import TextFitDialog
from desktop.ui.models.listing import ModelFacts

if TYPE_CHECKING:
    from desktop.base.config import Settings


class EmbeddingModelSource(ModelFacts, Protocol):
    """What offering and importing a collection's embedding model reads (the context's
    members of the same names; importing fits the file as the Models screen does)."""

    @property
    def settings(self) -> Settings:
        """The settings in force (the default embedding model)."""


@dataclass(frozen=True)
class EmbeddingChoice:
    """One embedding model a collection can use: its reference, name and whether it is here."""

    ref: str
    name: str
    installed: bool
    size_bytes: int | None = None


def embedding_choices(context: EmbeddingModelSource) -> list[EmbeddingChoice]:
    """Embedding models for a new collection: the default first, then those here, then the
    catalog's not downloaded yet. Reads GGUF headers of non-catalog files (cheap, cached)."""
    resolver = context.resolver
    default = str(context.settings.embedding_model or DEFAULT_EMBEDDING_MODEL)
    here: dict[str, EmbeddingChoice] = {}
    missing: dict[str, EmbeddingChoice] = {}
    for entry in context.catalog:
        if entry.kind != "embedding":
            continue
        try:
            resolver.locate(entry.id)
        except ModelNotFound:
            missing[entry.id] = EmbeddingChoice(entry.id, entry.name, False, entry.quant().size)
            continue
        except EdgeDeskError:
            continue  # blocked by policy or unreadable: not offered
        here[entry.id] = EmbeddingChoice(entry.id, entry.name, True)
    others = [m.id for m in context.installed.all() if m.catalog_id is None]
    for ref in [*others, *resolver.registered, default]:
        if ref in here or ref in missing:
            continue
        try:
            if resolver(ref).kind == "embedding":
                here[ref] = EmbeddingChoice(ref, ref, True)
        except EdgeDeskError:
            continue  # files gone, not allowed, not a GGUF: nothing to offer
    # What is on disk comes first: a default that is not downloaded (offline, it cannot
    # be) is offered after every model that can index now.
    first = here.pop(default, None)
    if first is not None:
        return [first, *here.values(), *missing.values()]
    later = missing.pop(default, None)
    return [*here.values(), *([later] if later else []), *missing.values()]


def embedding_importer(context: EmbeddingModelSource) -> Callable[[Path], EmbeddingChoice]:
    """Import a GGUF from disk as ``edgedesk models import`` does (blocking: it is
    hashed), refusing a model that is not an embedding model; its choice."""

    def import_embedding(path: Path) -> EmbeddingChoice:
        from desktop.ui.models.listing import imported_row

        row = imported_row(context, path)
        if row.kind != "embedding":
            raise InvalidRequest(
                f"{path.name} is a {row.kind} model, not an embedding model; it was "
                "imported for chats, pick an embedding model for a collection"
            )
        return EmbeddingChoice(row.id, row.id, True)

    return import_embedding


class NewCollectionDialog(TextFitDialog):
    """Ask for a collection's name and embedding model; ``choice()`` after it is accepted.

    With an ``importer``, a GGUF on disk can be imported from here as the model."""

    def __init__(
        self,
        choices: list[EmbeddingChoice],
        parent: QWidget | None = None,
        *,
        importer: Callable[[Path], EmbeddingChoice] | None = None,
        refusal: str | None = None,
    ) -> None:
        super().__init__(parent)
        self._importer = importer
        self._refusal = refusal  # why nothing can be downloaded now (offline…), or None
        self.setWindowTitle(self.tr("New collection"))
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.name = QLineEdit()
        self.name.setAccessibleName(self.tr("Name of the collection"))
        self.name.textChanged.connect(self._update)
        self.model = QComboBox()
        self.model.setAccessibleName(self.tr("Embedding model"))
        for choice in choices:
            label = (
                choice.name
                if choice.installed
                else (
                    choice.name
                    + " — "
                    + self.tr("not downloaded")
                    + f" ({human_size(choice.size_bytes)})"
                )
            )
            self.model.addItem(label, choice)
            self.model.setItemData(self.model.count() - 1, choice.ref, Qt.ItemDataRole.ToolTipRole)
        self.model.currentIndexChanged.connect(self._update)
        form.addRow(self.tr("Name:"), self.name)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        self.import_button = QPushButton(self.tr("Import a file…"))
        self.import_button.setToolTip(self.tr("Use an embedding model (.gguf) on this computer"))
        self.import_button.clicked.connect(self._ask_import)
        self.import_button.setVisible(importer is not None)
        model_row.addWidget(self.import_button)
        form.addRow(self.tr("Embedding model:"), model_row)
        layout.addLayout(form)
        self.note = QLabel()
        self.note.setObjectName("Muted")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._update()

    def _ask_import(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, self.tr("Import an embedding model"), "", self.tr("GGUF models (*.gguf)")
        )
        if name:
            self.import_file(Path(name))

    def import_file(self, path: Path) -> bool:
        """Import ``path`` as an embedding model, offer it and pick it; False (and why,
        in the note) when it cannot be used."""
        if self._importer is None:
            return False
        try:
            choice = self._importer(path)
        except EdgeDeskError as exc:
            self.say(self.note, error_text(exc))
            return False
        if not self.select(choice.ref):
            self.model.insertItem(0, choice.name, choice)
            self.model.setItemData(0, choice.ref, Qt.ItemDataRole.ToolTipRole)
            self.model.setCurrentIndex(0)
        return True

    def chosen_model(self) -> EmbeddingChoice | None:
        """The embedding model picked, if any is offered."""
        data = self.model.currentData()
        return data if isinstance(data, EmbeddingChoice) else None

    def choice(self) -> tuple[str, EmbeddingChoice] | None:
        """The name and model entered, or None when the name is empty or no model is offered."""
        name = self.name.text().strip()
        model = self.chosen_model()
        return (name, model) if name and model is not None else None

    def select(self, ref: str) -> bool:
        """Pick the model ``ref``; False if it is not offered."""
        for number in range(self.model.count()):
            data = self.model.itemData(number)
            if isinstance(data, EmbeddingChoice) and data.ref == ref:
                self.model.setCurrentIndex(number)
                return True
        return False

    def _update(self) -> None:
        model = self.chosen_model()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        if model is None:
            note = self.tr("No embedding model is available: import one on the Models screen.")
        elif model.installed:
            note = self.tr("Documents are embedded with %1 on this device.").replace(
                "%1", model.ref
            )
        elif self._refusal is not None:  # the download it needs cannot start: say why
            note = self._refusal
        else:
            note = (
                self.tr(
                    "%1 is not downloaded yet: it is downloaded first (%2), then your "
                    "documents are indexed."
                )
                .replace("%1", model.name)
                .replace("%2", human_size(model.size_bytes))
            )
        self.say(self.note, note)
        needs_download = model is not None and not model.installed
        ok.setText(self.tr("Download and create") if needs_download else self.tr("Create"))
        ok.setEnabled(self.choice() is not None and not (needs_download and self._refusal))
        ok.setToolTip((self._refusal or "") if needs_download else "")
