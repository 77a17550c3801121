"""The model details panel: what the GGUF header, the catalog and the fit plan say.

Architecture, parameters, quant, trained context, the chat template (viewable in full),
licence, each file with its size and SHA-256, and how the model would load here: context,
layers on the GPU, KV cache and total memory. Read on a worker (``ModelResolver.details``
reads the header and may hash a file); shown on the window's thread.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.resolve import ModelDetails
from desktop.ui.common.core_text import verdict_text
from desktop.ui.common.qmodels import human_size


def parameter_count(value: int) -> str:
    """``1.5B``, ``270M``: a model's size as people say it."""
    for unit, size in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if value >= size:
            return f"{value / size:.1f}".removesuffix(".0") + unit
    return str(value)


class ModelDetailsDialog(QDialog):
    """Shows one model's ``ModelDetails``; every value can be selected and copied."""

    def __init__(self, details: ModelDetails, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.details = details
        self.setWindowTitle(self.tr("Model details: %1").replace("%1", details.id))
        self.setObjectName("ModelDetails")
        self.resize(720, 640)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.values: dict[str, QLabel] = {}  # by field key, for tests and screen readers
        for key, label, value in self._rows():
            shown = QLabel(value)
            shown.setTextFormat(Qt.TextFormat.PlainText)  # names from files: never HTML
            shown.setWordWrap(True)
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            shown.setAccessibleName(label)
            form.addRow(label, shown)
            self.values[key] = shown
        layout.addLayout(form)
        template = QLabel(self.tr("Chat template"))
        layout.addWidget(template)
        self.template = QPlainTextEdit()
        self.template.setReadOnly(True)
        self.template.setAccessibleName(self.tr("Chat template"))
        self.template.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.template.setPlainText(details.chat_template or self.tr("(none)"))
        layout.addWidget(self.template, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _rows(self) -> list[tuple[str, str, str]]:
        details, info, fit = self.details, self.details.info, self.details.fit
        entry = details.entry
        files = "\n".join(
            f"{f.path}\n{human_size(f.size)} · SHA-256 {f.sha256}"
            for f in (*details.files, *filter(None, [details.projector]))
        )
        vision = (
            self.tr("yes (projector %1)").replace("%1", details.projector.path.name)
            if details.projector is not None
            else self.tr("no")
        )
        if fit.gpu_layers <= 0:
            layers = self.tr("none (runs on the CPU)")
        elif fit.gpu_layers >= fit.total_layers:
            layers = self.tr("all %1").replace("%1", str(fit.total_layers))
        else:
            layers = (
                self.tr("%1 of %2")
                .replace("%1", str(fit.gpu_layers))
                .replace("%2", str(fit.total_layers))
            )
        if fit.expert_layers and fit.gpu_layers > 0:
            # Where a mixture of experts' experts go (issue 46), in the planner's words
            # until the translators have a sentence of their own for it.
            layers += f" · {fit.where()}"
        kv = (
            self.tr("%1 at %2 tokens (%3)")
            .replace("%1", human_size(details.kv_cache_bytes))
            .replace("%2", f"{fit.context_length:,}")
            .replace("%3", fit.cache_type)
        )
        where = details.template_source
        source = (
            self.tr("the GGUF file")
            if where == "gguf"
            else self.tr("the catalog (models.toml)")
            if where == "catalog"
            else self.tr("built in for %1").replace("%1", where.partition(":")[2])
            if where
            else self.tr("nowhere: this model cannot chat")
        )
        return [
            ("name", self.tr("Name"), entry.name if entry else (info.name or details.id)),
            ("architecture", self.tr("Architecture"), info.architecture),
            ("parameters", self.tr("Parameters"), parameter_count(info.parameters)),
            ("quant", self.tr("Quantization"), info.file_type or self.tr("unknown")),
            ("trained_context", self.tr("Trained context"), f"{info.context_length:,}"),
            ("layers", self.tr("Layers"), str(info.block_count)),
            (
                "licence",
                self.tr("Licence"),
                entry.license if entry else self.tr("not in the catalog: see the model's own page"),
            ),
            ("vision", self.tr("Sees pictures"), vision),
            ("files", self.tr("Files"), files),
            ("fit", self.tr("Fit on this machine"), verdict_text(fit.verdict.value)),
            ("context", self.tr("Context when loaded"), f"{fit.context_length:,}"),
            ("gpu_layers", self.tr("Layers on the GPU"), layers),
            ("kv_cache", self.tr("KV cache"), kv),
            ("memory", self.tr("Memory needed"), human_size(fit.estimated_bytes)),
            ("template_source", self.tr("Chat template from"), source),
        ]
