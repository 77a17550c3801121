"""The New collection dialog: a name and the embedding model its documents are embedded with.

The models offered are the embedding models that can run now (the settings' default
first if it is on disk, catalog models on disk, pulled or imported files whose header
says "embedding") and, marked as such and after them, the catalog's embedding models not
downloaded yet: picking one of those
downloads it first (the Documents screen does that through the Models screen).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.app import DEFAULT_EMBEDDING_MODEL, AppContext
from desktop.errors import EdgeDeskError, ModelNotFound
from desktop.ui.qmodels import human_size
from desktop.ui.text_fit import TextFitDialog


@dataclass(frozen=True)
class EmbeddingChoice:
    """One embedding model a collection can use: its reference, name and whether it is here."""

    ref: str
    name: str
    installed: bool
    size_bytes: int | None = None


def embedding_choices(context: AppContext) -> list[EmbeddingChoice]:
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


class NewCollectionDialog(TextFitDialog):
    """Ask for a collection's name and embedding model; ``choice()`` after it is accepted."""

    def __init__(self, choices: list[EmbeddingChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        form.addRow(self.tr("Embedding model:"), self.model)
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
        ok.setText(
            self.tr("Create")
            if model is None or model.installed
            else self.tr("Download and create")
        )
        ok.setEnabled(self.choice() is not None)
