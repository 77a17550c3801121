"""The chat's parameters panel: max tokens, top-p, top-k, min-p, repeat penalty, seed, the
context length and, for a mixture-of-experts model, where its experts go.

Each value is a spin box bounded by ``chat.parameters.LIMITS``, so a value the engine
would refuse cannot be typed. Temperature stays next to the model, where it always was.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from desktop.chat import LIMITS, Sampling

SPECIAL = -1  # the seed box's "Random" (no seed)
AUTO = int(LIMITS["context_length"].low) - 1  # the context box's "Auto" (fitted)
FIRST_STEP = 512  # the arrows' smallest context after Auto; then 1024, 2048, 4096, …
CONTEXT_HIGH = int(LIMITS["context_length"].high)


def context_steps(maximum: int) -> list[int]:
    """The lengths the arrows step through: 512, 1024, 2048, … then ``maximum`` itself
    (a model's trained context need not be a power of two)."""
    steps: list[int] = []
    length = FIRST_STEP
    while length < maximum:
        steps.append(length)
        length *= 2
    return [*steps, maximum]


class ContextBox(QSpinBox):
    """Context length in tokens: "Auto", then 512, 1024, 2048, … up to the chat's model's
    trained context (a typed value in between is kept; the arrows go to the next step)."""

    def stepBy(self, steps: int) -> None:
        """Move ``steps`` places along Auto, 512, 1024, 2048, … the model's maximum."""
        ladder = [AUTO, *context_steps(self.maximum())]
        value = self.value()
        if steps > 0:
            place = next((i for i, v in enumerate(ladder) if v > value), len(ladder)) - 1
        else:
            place = next((i for i, v in enumerate(ladder) if v >= value), len(ladder))
        self.setValue(ladder[max(0, min(len(ladder) - 1, place + steps))])

    def set_model_maximum(self, maximum: int | None) -> None:
        """Cap the box at the model's trained context (None: the engine's own limit)."""
        self.setMaximum(max(FIRST_STEP, min(maximum or CONTEXT_HIGH, CONTEXT_HIGH)))


FIRST_LAYERS = "first"  # the experts box's "First N layers in RAM" (N in its spin box)


class ExpertsBox(QWidget):
    """Where a mixture-of-experts model's routed experts go (``engine.cpu_moe`` for this
    chat): Auto, All in RAM, On GPU, or the first N layers' in RAM. Window thread only."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.choice = QComboBox()
        self.choice.addItem(self.tr("Auto"), None)
        self.choice.addItem(self.tr("All in RAM"), "all")
        self.choice.addItem(self.tr("On GPU"), "none")
        self.choice.addItem(self.tr("First N layers in RAM"), FIRST_LAYERS)
        self.choice.setToolTip(
            self.tr(
                "Where this mixture-of-experts model keeps its experts: Auto fits as many "
                "on the GPU as there is room for; All in RAM leaves the GPU to attention "
                "and the KV cache; On GPU places whole layers; or the experts of the first "
                "N layers in RAM. Another choice reloads the model."
            )
        )
        self.layers = QSpinBox()
        self.layers.setRange(1, 1)
        self.layers.setPrefix("N = ")  # the N of "First N layers in RAM"
        self.layers.setAccessibleName(self.tr("Layers whose experts stay in RAM"))
        self.layers.setVisible(False)
        row.addWidget(self.choice, 1)
        row.addWidget(self.layers)
        self.choice.currentIndexChanged.connect(self._chosen)
        self.layers.valueChanged.connect(lambda _v: self.changed.emit())

    def set_layers(self, layers: int) -> None:
        """The model's layer count: the most N may be."""
        self.layers.setMaximum(max(1, layers))

    def show_value(self, value: str | int | None) -> None:
        """Show ``value`` (None, "all", "none" or a number of layers)."""
        if isinstance(value, int):
            self.layers.setValue(value)
            self.choice.setCurrentIndex(self.choice.findData(FIRST_LAYERS))
        else:
            self.choice.setCurrentIndex(max(0, self.choice.findData(value)))
        self.layers.setVisible(self.choice.currentData() == FIRST_LAYERS)

    def value(self) -> str | int | None:
        """The choice as ``Sampling.cpu_moe`` keeps it."""
        data = self.choice.currentData()
        if data == FIRST_LAYERS:
            return self.layers.value()
        return data if isinstance(data, str) else None

    def _chosen(self, _number: int) -> None:
        self.layers.setVisible(self.choice.currentData() == FIRST_LAYERS)
        self.changed.emit()


class ParametersPanel(QWidget):
    """Edits a chat's sampling settings; ``changed`` carries the new ``Sampling``.

    Window thread only. ``show_sampling`` fills the boxes without emitting ``changed``.
    """

    changed = Signal(object)  # chat.parameters.Sampling

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ParametersPanel")
        self._shown = Sampling()
        self._filling = False
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 4, 0, 4)
        self.max_tokens = self._whole("max_tokens", 64)
        self.max_tokens.setToolTip(self.tr("The longest answer, in tokens"))
        self.top_p = self._fraction("top_p", 0.05)
        self.top_p.setToolTip(
            self.tr(
                "Sample only from the most likely tokens that together "
                "reach this probability (1 = off)"
            )
        )
        self.top_k = self._whole("top_k", 5)
        self.top_k.setSpecialValueText(self.tr("Off"))
        self.top_k.setToolTip(self.tr("Sample only from this many most likely tokens (0 = off)"))
        self.min_p = self._fraction("min_p", 0.01)
        self.min_p.setToolTip(
            self.tr("Leave out tokens less likely than this share of the most likely one (0 = off)")
        )
        self.repeat_penalty = self._fraction("repeat_penalty", 0.05)
        self.repeat_penalty.setToolTip(self.tr("Make recently used tokens less likely (1 = off)"))
        self.seed = QSpinBox()
        self.seed.setRange(SPECIAL, int(LIMITS["seed"].high))
        self.seed.setSpecialValueText(self.tr("Random"))
        self.seed.setToolTip(
            self.tr(
                "The same seed, question and settings give the same "
                "answer; Random picks a new one each time"
            )
        )
        self.seed.valueChanged.connect(self._edited)
        self.context = ContextBox()
        self.context.setRange(AUTO, CONTEXT_HIGH)
        self.context.setSpecialValueText(self.tr("Auto"))
        self.context.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        self.context.setToolTip(
            self.tr(
                "Tokens the model keeps in mind, this chat's question "
                "and history included; Auto fits it to this machine. "
                "Another value reloads the model."
            )
        )
        self.context.valueChanged.connect(self._edited)
        self.experts = ExpertsBox()
        self.experts.changed.connect(self._edited)
        self.reset_button = QPushButton(self.tr("Defaults"))
        self.reset_button.setToolTip(self.tr("Put every parameter back to its default"))
        self.reset_button.clicked.connect(self.reset)
        rows = [
            (self.tr("Max tokens"), self.max_tokens),
            (self.tr("Top-p"), self.top_p),
            (self.tr("Top-k"), self.top_k),
            (self.tr("Min-p"), self.min_p),
            (self.tr("Repeat penalty"), self.repeat_penalty),
            (self.tr("Seed"), self.seed),
            (self.tr("Context"), self.context),
            (self.tr("Experts"), self.experts.choice),
        ]
        for number, (text, box) in enumerate(rows):
            label = QLabel(text)
            label.setBuddy(box)
            box.setAccessibleName(text)
            row, column = divmod(number, 3)
            grid.addWidget(label, row, column * 2)
            grid.addWidget(self.experts if box is self.experts.choice else box, row, column * 2 + 1)
        # Only a mixture-of-experts model has experts to place (set_expert_layers).
        self.experts_label = label
        self.experts_label.setVisible(False)
        self.experts.setVisible(False)
        grid.addWidget(self.reset_button, 2, 5, Qt.AlignmentFlag.AlignRight)
        for column in (1, 3, 5):
            grid.setColumnStretch(column, 1)

    def _whole(self, name: str, step: int) -> QSpinBox:
        box = QSpinBox()
        box.setRange(int(LIMITS[name].low), int(LIMITS[name].high))
        box.setSingleStep(step)
        box.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        box.valueChanged.connect(self._edited)
        return box

    def _fraction(self, name: str, step: float) -> QDoubleSpinBox:
        box = QDoubleSpinBox()
        box.setDecimals(2)
        box.setRange(LIMITS[name].low, LIMITS[name].high)
        box.setSingleStep(step)
        box.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        box.valueChanged.connect(self._edited)
        return box

    def show_sampling(self, sampling: Sampling) -> None:
        """Show ``sampling`` (a chat was chosen, or a preset applied); emits nothing."""
        self._filling = True
        self._shown = sampling
        self.max_tokens.setValue(sampling.max_tokens)
        self.top_p.setValue(sampling.top_p)
        self.top_k.setValue(sampling.top_k)
        self.min_p.setValue(sampling.min_p)
        self.repeat_penalty.setValue(sampling.repeat_penalty)
        self.seed.setValue(SPECIAL if sampling.seed is None else sampling.seed)
        self.context.setValue(AUTO if sampling.context_length is None else sampling.context_length)
        self.experts.show_value(sampling.cpu_moe)
        self._filling = False

    def set_model_maximum(self, maximum: int | None) -> None:
        """Let the context go up to the chat model's trained context; emits nothing."""
        self._filling = True
        self.context.set_model_maximum(maximum)
        self._filling = False

    def set_expert_layers(self, layers: int) -> None:
        """Offer the experts' place for a mixture-of-experts model of ``layers`` layers
        (0: not one, nothing offered); emits nothing."""
        self._filling = True
        self.experts.set_layers(layers)
        self.experts_label.setVisible(layers > 0)
        self.experts.setVisible(layers > 0)
        self._filling = False

    def sampling(self) -> Sampling:
        """The settings the boxes show (temperature: the one last shown)."""
        seed, context = self.seed.value(), self.context.value()
        return Sampling(
            self._shown.temperature,
            self.max_tokens.value(),
            self.top_p.value(),
            self.top_k.value(),
            self.min_p.value(),
            self.repeat_penalty.value(),
            None if seed == SPECIAL else seed,
            None if context == AUTO else context,
            self.experts.value(),
        )

    def reset(self) -> None:
        """Every parameter but the temperature back to its default."""
        self.show_sampling(Sampling(temperature=self._shown.temperature))
        self._edited()

    def _edited(self) -> None:
        if not self._filling:
            self._shown = self.sampling()
            self.changed.emit(self._shown)
