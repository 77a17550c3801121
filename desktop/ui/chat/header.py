"""The controls above a chat: model, temperature, ephemeral, system prompt with presets, the
document collection that grounds the answers, and the chat's Tools switch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QPushButton,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.chat import Conversation, Sampling
from desktop.ui.chat.parameters_panel import ParametersPanel
from desktop.ui.chat.presets import PresetStore
from desktop.ui.common.error_text import error_text
from desktop.ui.common.qmodels import ChatModelChoice
from desktop.ui.common.rich_text import literal_tooltip
from desktop.ui.common.text_fit import FitLabel


class ShrinkingCombo(QComboBox):
    """A drop-down as wide as its longest item when there is room, narrower (elided) when
    the window is: its contents never set the window's minimum width."""

    def minimumSizeHint(self) -> QSize:
        """Room for a few characters."""
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), 100), hint.height())

    def shown_text(self) -> str:
        """The current item's text as drawn: cut with "…" to the field's width."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        return self.fontMetrics().elidedText(
            option.currentText, Qt.TextElideMode.ElideRight, field.width()
        )

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw as QComboBox does, but the text elided: Qt clipped it ("No docume")."""
        del event
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.shown_text()
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


PARAMETERS_ROLE = Qt.ItemDataRole.UserRole + 1  # a preset's saved sampling parameters
REMOTE_ROLE = Qt.ItemDataRole.UserRole + 2  # the remote engine a model runs on ("": here)


class ChatHeader(QWidget):
    """Edits the shown chat's settings in place; says when the ephemeral flag changed."""

    ephemeral_toggled = Signal(object)  # the Conversation
    collection_changed = Signal(object)  # the Conversation whose collection the user chose
    think_changed = Signal(object)  # the Conversation whose Think switch the user flipped
    model_changed = Signal(object)  # the Conversation whose model the user chose
    chat_shown = Signal(object)  # the Conversation whose settings (model…) are shown anew
    tools_changed = Signal(object)  # the Conversation whose Tools switch the user flipped
    # The Conversation whose sampling settings (temperature, the parameters panel, a
    # preset's) changed.
    parameters_changed = Signal(object)
    error = Signal(str)

    def __init__(
        self,
        current: Callable[[], Conversation | None],
        presets: PresetStore | None = None,
        parent: QWidget | None = None,
        *,
        reasoning: Callable[[str], bool] | None = None,
        trained: Callable[[str], int | None] | None = None,
        experts: Callable[[str], int] | None = None,
    ) -> None:
        super().__init__(parent)
        self._current, self._presets = current, presets
        self._reasoning = reasoning or (lambda _ref: False)  # does this model think first?
        self._trained = trained or (lambda _ref: None)  # the model's trained context
        self._experts = experts or (lambda _ref: 0)  # layers of a mixture-of-experts model
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.model_box = QComboBox()
        self.model_box.setMinimumWidth(200)  # with the rest of the row: fits a 900 px screen
        self.model_box.setAccessibleName(self.tr("Model for this chat"))
        self.model_box.setPlaceholderText(self.tr("Choose a model…"))
        self.model_box.currentIndexChanged.connect(self._model_chosen)
        self.collection_box = ShrinkingCombo()
        # As wide as its longest name: a fixed width showed "Docs: Company" for "Docs:
        # Company handbook".
        self.collection_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.collection_box.setMaximumWidth(360)  # and no wider: the window must fit
        self.collection_box.setAccessibleName(self.tr("Documents that ground the answers"))
        self.collection_box.currentIndexChanged.connect(self._collection_chosen)
        self._collections_known = False  # until set_collections: cannot tell one is gone
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setPrefix(self.tr("Temperature "))
        self.temperature.setAccessibleName(self.tr("Temperature"))
        self.temperature.valueChanged.connect(self._temperature_changed)
        self.ephemeral = QCheckBox(self.tr("Ephemeral"))
        self.ephemeral.setToolTip(self.tr("Ephemeral chats are never saved to disk"))
        self.ephemeral.setAccessibleName(self.tr("Ephemeral chat"))
        self.ephemeral.toggled.connect(self._ephemeral_changed)
        self.think = QCheckBox(self.tr("Think"))
        self.think.setToolTip(
            self.tr(
                "Let this reasoning model think before it answers; "
                "off, it answers at once (faster, less careful)"
            )
        )
        self.think.setAccessibleName(self.tr("Think before answering"))
        self.think.toggled.connect(self._think_changed)
        self.think.setVisible(False)
        row.addWidget(self.model_box, 1)
        row.addWidget(self.collection_box)
        row.addWidget(self.temperature)
        row.addWidget(self.ephemeral)
        row.addWidget(self.think)
        layout.addLayout(row)
        layout.addLayout(self._build_prompt_row())
        layout.addWidget(self.parameters)
        # Said in words above the transcript: the list's marker alone went unnoticed.
        self.ephemeral_banner = FitLabel(
            self.tr(
                "Ephemeral chat: nothing of it is saved to disk; it is gone when EdgeDesk closes."
            )
        )
        self.ephemeral_banner.setObjectName("Banner")
        self.ephemeral_banner.setVisible(False)
        layout.addWidget(self.ephemeral_banner)
        self._fill_collections([])
        self._say_missing("")
        self.reload_presets()

    def _build_parameters(self, row: QHBoxLayout) -> None:
        # A button beside the presets opens the panel under the system prompt.
        # A push button, as its neighbours are: a bare tool button drew hugging its text.
        self.parameters_button = QPushButton()
        self.parameters_button.setText(self.tr("Parameters"))
        self.parameters_button.setCheckable(True)
        self.parameters_button.setToolTip(
            self.tr("Max tokens, top-p, top-k, min-p, repeat penalty and seed for this chat")
        )
        self.parameters_button.setAccessibleName(self.tr("Show the sampling parameters"))
        row.addWidget(self.parameters_button)
        self.parameters = ParametersPanel()
        self.parameters.setVisible(False)
        self.parameters.changed.connect(self._parameters_changed)
        self.parameters_button.toggled.connect(self.parameters.setVisible)

    def _build_tools(self, row: QHBoxLayout) -> None:
        # Whether this chat's model is offered the MCP tools, and how many there are;
        # hidden until a tool server is configured (set_tools).
        self.tools_switch = QCheckBox()
        self.tools_switch.setChecked(True)
        self.tools_switch.setAccessibleName(self.tr("Offer the MCP tools in this chat"))
        self.tools_switch.toggled.connect(self._tools_changed)
        self.tools_switch.setVisible(False)
        row.addWidget(self.tools_switch)
        self.set_tools(0, None)

    def set_tools(self, servers: int, tools: int | None) -> None:
        """Say how many tool servers may run (and, once known, how many tools they
        offer); no switch when there is no server."""
        servers_text = (
            self.tr("1 server")
            if servers == 1
            else self.tr("%1 servers").replace("%1", str(servers))
        )
        if tools is None:
            count = servers_text
        else:
            count = (
                self.tr("1 tool") if tools == 1 else self.tr("%1 tools").replace("%1", str(tools))
            )
        self.tools_switch.setText(self.tr("Tools: %1").replace("%1", count))
        self.tools_switch.setToolTip(
            self.tr(
                "On: the model may call the tools of %1. "
                "Off: no tools in this chat; other chats keep theirs."
            ).replace("%1", servers_text)
        )
        self.tools_switch.setVisible(servers > 0)

    def _build_prompt_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.system_prompt = QLineEdit()
        self.system_prompt.setPlaceholderText(self.tr("System prompt (optional)"))
        self.system_prompt.setAccessibleName(self.tr("System prompt"))
        self.system_prompt.textEdited.connect(self._system_changed)
        self.preset_box = QComboBox()
        self.preset_box.setAccessibleName(self.tr("System prompt presets"))
        self.preset_box.setPlaceholderText(self.tr("Presets"))
        self.preset_box.activated.connect(self._preset_chosen)
        self.save_preset_button = QPushButton(self.tr("Save preset…"))
        self.save_preset_button.setAccessibleName(
            self.tr("Save this system prompt as a named preset")
        )
        self.save_preset_button.clicked.connect(self._ask_save_preset)
        row.addWidget(self.system_prompt, 1)
        row.addWidget(self.preset_box)
        row.addWidget(self.save_preset_button)
        # In the second row, which has room to spare: the first sets the window's minimum
        # width (issue 24, blocker 2).
        self._build_parameters(row)
        self._build_tools(row)
        return row

    # ------------------------------------------------------------------ showing a chat
    def show_chat(self, chat: Conversation) -> None:
        """Show ``chat``'s settings without writing them back."""
        switches = (self.temperature, self.ephemeral, self.collection_box, self.think)
        for widget in (*switches, self.tools_switch):
            widget.blockSignals(True)
        self.show_model(chat.model)
        self.think.setChecked(chat.think)
        self.tools_switch.setChecked(chat.tools)
        self._show_think(chat.model)
        self.temperature.setValue(chat.temperature)
        self.parameters.set_model_maximum(self._trained(chat.model) if chat.model else None)
        self.parameters.set_expert_layers(self._experts(chat.model) if chat.model else 0)
        self.parameters.show_sampling(chat.sampling)
        self.system_prompt.setText(chat.system_prompt)
        self.ephemeral.setChecked(chat.ephemeral)
        self.ephemeral.setEnabled(chat.store_id is None)  # saved chats cannot change store
        self.ephemeral_banner.setVisible(chat.ephemeral)
        missing = self._drop_missing(chat)
        self.collection_box.setCurrentIndex(max(0, self.collection_box.findData(chat.collection)))
        self.preset_box.setCurrentIndex(-1)
        for widget in (*switches, self.tools_switch):
            widget.blockSignals(False)
        self._say_missing(missing)
        self.chat_shown.emit(chat)

    def set_models(self, models: Sequence[tuple[str, str]]) -> None:
        """Offer ``(label, reference)`` pairs (a ``ChatModelChoice`` also says the remote
        it runs on); keeps the current chat's choice."""
        chat = self._current()
        keep = chat.model if chat else ""
        self.model_box.blockSignals(True)
        self.model_box.clear()
        for pair in models:
            label, ref = pair
            self.model_box.addItem(label, ref)
            remote = pair.remote if isinstance(pair, ChatModelChoice) else ""
            self.model_box.setItemData(self.model_box.count() - 1, remote, REMOTE_ROLE)
        self.model_box.blockSignals(False)
        if chat is not None and not chat.model and models:
            chat.model = models[0][1]
        self.show_model(keep or (chat.model if chat else ""))
        if chat is not None:
            self.chat_shown.emit(chat)

    def model_label(self, ref: str) -> tuple[str, str]:
        """How ``ref`` is named in the model box (``ref`` itself when it is not offered)
        and the remote engine it runs on ("": this device, or not known to be remote)."""
        number = self.model_box.findData(ref)
        if number < 0:
            return ref, ""
        return self.model_box.itemText(number), str(
            self.model_box.itemData(number, REMOTE_ROLE) or ""
        )

    def show_model(self, ref: str) -> None:
        """Select ``ref`` in the model box (nothing if it is not offered)."""
        self.model_box.blockSignals(True)
        self.model_box.setCurrentIndex(self.model_box.findData(ref))
        self.model_box.blockSignals(False)

    def set_collections(self, names: list[str]) -> None:
        """Offer the document collections (and 'No documents')."""
        self._collections_known = True
        self._fill_collections(names)
        chat = self._current()
        missing = "" if chat is None else self._drop_missing(chat)
        self.collection_box.blockSignals(True)
        found = self.collection_box.findData(chat.collection if chat else "")
        self.collection_box.setCurrentIndex(max(0, found))
        self.collection_box.blockSignals(False)
        if missing:
            self._say_missing(missing)

    def _fill_collections(self, names: list[str]) -> None:
        self.collection_box.blockSignals(True)
        self.collection_box.clear()
        self.collection_box.addItem(self.tr("No documents"), "")
        for name in names:
            self.collection_box.addItem(self.tr("Docs: ") + name, name)
        self.collection_box.blockSignals(False)

    def _drop_missing(self, chat: Conversation) -> str:
        """Unground ``chat`` if its collection was deleted; returns that collection's name.

        Only the window's copy forgets it (the store keeps the name until the user picks
        another): a collection list that failed to load must not erase every chat's choice.
        """
        name = chat.collection
        if not name or not self._collections_known or self.collection_box.findData(name) >= 0:
            return ""
        chat.collection = ""
        return name

    def _say_missing(self, name: str) -> None:
        """Tooltip (and notice) saying the chat's collection is gone, or the usual tooltip."""
        if not name:
            self.collection_box.setToolTip(
                self.tr("Answer from a document collection, with numbered citations")
            )
            return
        text = self.tr(
            "The document collection “%1” this chat used no longer exists; "
            "answers are not grounded in documents."
        ).replace("%1", name)
        # The name comes from the user's data or an imported chat: shown as text, not HTML.
        self.collection_box.setToolTip(literal_tooltip(text))
        self.error.emit(text)

    # ------------------------------------------------------------------ edits
    def _model_chosen(self, number: int) -> None:
        chat = self._current()
        if chat is not None and number >= 0:
            chat.model = str(self.model_box.itemData(number))
            self.model_changed.emit(chat)
            self._show_think(chat.model)
            self.parameters.set_model_maximum(self._trained(chat.model))
            self.parameters.set_expert_layers(self._experts(chat.model))

    def _show_think(self, ref: str) -> None:
        # Only reasoning models have a switch to offer; others would ignore it.
        self.think.setVisible(bool(ref) and self._reasoning(ref))

    def _think_changed(self, checked: bool) -> None:
        chat = self._current()
        if chat is not None:
            chat.think = checked
            self.think_changed.emit(chat)

    def _tools_changed(self, checked: bool) -> None:
        chat = self._current()
        if chat is not None:
            chat.tools = checked
            self.tools_changed.emit(chat)

    def _collection_chosen(self, number: int) -> None:
        chat = self._current()
        if chat is not None and number >= 0:
            chat.collection = str(self.collection_box.itemData(number) or "")
            self._say_missing("")
            self.collection_changed.emit(chat)

    def _temperature_changed(self, value: float) -> None:
        chat = self._current()
        if chat is not None:
            chat.temperature = value
            self.parameters.show_sampling(chat.sampling)
            self.parameters_changed.emit(chat)

    def _parameters_changed(self, sampling: object) -> None:
        chat = self._current()
        if chat is not None and isinstance(sampling, Sampling):
            chat.sampling = replace(sampling, temperature=chat.temperature)
            self.parameters_changed.emit(chat)

    def _system_changed(self, text: str) -> None:
        chat = self._current()
        if chat is not None:
            chat.system_prompt = text

    def _ephemeral_changed(self, on: bool) -> None:
        chat = self._current()
        if chat is not None:
            chat.ephemeral = on
            self.ephemeral_banner.setVisible(on)
            self.ephemeral_toggled.emit(chat)

    # ------------------------------------------------------------------ presets
    def reload_presets(self) -> None:
        """Re-read the saved presets into the preset box."""
        self.preset_box.clear()
        if self._presets is None:
            self.preset_box.setEnabled(False)
            self.save_preset_button.setEnabled(False)
            return
        try:
            presets = self._presets.entries()
        except EdgeDeskError as exc:
            self.error.emit(error_text(exc))
            presets = {}
        for name, preset in presets.items():
            self.preset_box.addItem(name, preset.prompt)
            number = self.preset_box.count() - 1
            self.preset_box.setItemData(
                number, literal_tooltip(preset.prompt), Qt.ItemDataRole.ToolTipRole
            )
            self.preset_box.setItemData(number, preset.parameters, PARAMETERS_ROLE)
        self.preset_box.setCurrentIndex(-1)

    def choose_preset(self, name: str) -> bool:
        """Use preset ``name`` as the shown chat's system prompt; False if there is none."""
        number = self.preset_box.findText(name)
        if number < 0:
            return False
        self.preset_box.setCurrentIndex(number)
        self._preset_chosen(number)
        return True

    def _preset_chosen(self, number: int) -> None:
        if number < 0:
            return
        prompt = str(self.preset_box.itemData(number))
        self.system_prompt.setText(prompt)
        self._system_changed(prompt)
        parameters = self.preset_box.itemData(number, PARAMETERS_ROLE)
        chat = self._current()
        if chat is not None and isinstance(parameters, dict):
            # Only valid values are taken; a hand-edited file's others keep the chat's.
            chat.sampling = Sampling.from_dict(parameters, chat.sampling)
            self.temperature.blockSignals(True)
            self.temperature.setValue(chat.temperature)
            self.temperature.blockSignals(False)
            self.parameters.show_sampling(chat.sampling)
            self.parameters_changed.emit(chat)

    def save_preset(self, name: str) -> None:
        """Save the current system prompt as preset ``name``."""
        if self._presets is None:
            return
        try:
            chat = self._current()
            self._presets.save(
                name,
                self.system_prompt.text(),
                chat.sampling.to_dict() if chat is not None else None,
            )
        except EdgeDeskError as exc:
            self.error.emit(error_text(exc))
            return
        self.reload_presets()
        self.preset_box.setCurrentIndex(self.preset_box.findText(" ".join(name.split())))

    def _ask_save_preset(self) -> None:
        name, ok = QInputDialog.getText(
            self, self.tr("Save preset"), self.tr("Name for this system prompt:")
        )
        if ok and name.strip():
            self.save_preset(name)
