"""Settings: data location, encryption at rest, keep-alive, GPU layers and context (auto
by default), offline, retention, theme and language; saved to ``settings.toml``;
policy-locked values shown disabled; below them, the read-only hardware report
(``edgedesk doctor``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QLabel,
    QMessageBox,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.base.config import (
    EffectiveSettings,
    Paths,
    Settings,
    apply_changes,
    save_user_settings,
    setting_value,
)
from desktop.ui.common.fonts import font_warning
from desktop.ui.common.text_fit import TextFitDialog
from desktop.ui.settings.data_location import DataLocationRow
from desktop.ui.settings.encryption import EncryptionSwitch
from desktop.ui.settings.hardware_panel import HardwarePanel

AUTO_CONTEXT = 255  # one below the smallest valid context: the spin box shows "Auto"
AUTO_LAYERS = -1
FRAME_ROOM = 60  # px of the screen's height left to the title bar and the frame
MIN_HEIGHT = 360  # px: the dialog can be made this short; the rest scrolls


class SettingsDialog(TextFitDialog):
    """Edit the user's settings; ``changes()`` says what differs from what is in force."""

    def __init__(
        self,
        paths: Paths,
        effective: EffectiveSettings,
        parent: QWidget | None = None,
        *,
        encryption: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Settings"))
        self.setMinimumWidth(620)  # the longest checkbox text and the data path fit
        self._paths = paths
        self._effective = effective
        settings = effective.settings
        form = QFormLayout()
        self.location = DataLocationRow(paths, effective)
        form.addRow(self.tr("Data location"), self.location)
        self._build_fields(settings)
        # The database's encryption (AtRest.status()): a switch, run by the window.
        self.encryption: EncryptionSwitch | None = None
        if encryption is not None:
            self.encryption = EncryptionSwitch(
                encryption,
                effective.is_locked("encrypt_at_rest") and settings.encrypt_at_rest is True,
            )
            form.addRow(self.tr("Encryption"), self.encryption)
        labels = {
            "engine.keep_alive_s": self.tr("Keep models loaded for"),
            "engine.gpu_layers": self.tr("GPU layers"),
            "engine.context_length": self.tr("Context length"),
            "offline": self.tr("Network"),
            "retention_days": self.tr("Delete chats after"),
            "theme": self.tr("Theme"),
            "language": self.tr("Language (after a restart)"),
            "keep_in_tray": self.tr("Tray"),
        }
        for key, widget in self._fields.items():
            widget.setAccessibleName(labels[key])
            form.addRow(labels[key], self._locked_note(key, widget))
        note = QLabel(self.tr("Language changes apply the next time EdgeDesk starts."))
        note.setObjectName("Muted")
        note.setWordWrap(True)
        self.language_note = note
        self.language.currentIndexChanged.connect(self._language_picked)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.hardware = HardwarePanel()  # filled by the window from a worker (doctor)
        # Everything but Save/Cancel scrolls: on a 768 px screen the passphrase fields
        # and the hardware report grow inside, the dialog keeps its size and Save stays
        # under the cursor.
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 8, 0)  # room beside the scroll bar
        column.addLayout(form)
        column.addWidget(note)
        column.addWidget(self.hardware, 1)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroller.setWidget(content)
        self._content = content
        self.buttons = buttons
        self._layout = layout = QVBoxLayout(self)
        layout.addWidget(self.scroller, 1)
        layout.addWidget(buttons)
        self._sized = False

    def fit(self) -> None:
        """Sized once, to its content up to the screen's height; then fields shown or
        hidden scroll inside and the dialog (and its Save) stay where they are."""
        if self._sized:
            return
        screen = self.screen().availableGeometry()
        content = self._content
        margins = self._layout.contentsMargins()
        need = (
            content.sizeHint().height()
            + self.buttons.sizeHint().height()
            + self._layout.spacing()
            + margins.top()
            + margins.bottom()
            + 4
        )
        height = min(need, screen.height() - FRAME_ROOM)
        width = min(max(self.width(), self.minimumWidth()), screen.width() - 16)
        self.setMinimumHeight(min(MIN_HEIGHT, height))
        self.resize(width, height)
        self._sized = True

    def _language_picked(self) -> None:
        # Said on picking, before saving: Chinese without a Chinese font shows boxes.
        warning = font_warning(str(self.language.currentData()))
        self.language_note.setText(
            warning or self.tr("Language changes apply the next time EdgeDesk starts.")
        )

    def accept(self) -> None:
        """Close and save only when the encryption change can be made as typed."""
        if self.encryption is not None and self.encryption.problem() is not None:
            return  # e.g. a new passphrase typed differently twice: said beside it
        if self.encryption is not None and self.encryption.wanted() is False:
            # Protection switched off is asked, never done on a mere Save.
            answer = QMessageBox.question(
                self,
                self.tr("Turn encryption off?"),
                self.tr(
                    "Your conversations and document indexes will be stored as plain files, "
                    "readable by anyone who gets a copy of them or of this computer's disk. "
                    "Decrypt your data now?"
                ),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        super().accept()

    def _build_fields(self, settings: Settings) -> None:
        self.keep_alive = QSpinBox()
        self.keep_alive.setRange(0, 24 * 60)
        self.keep_alive.setSuffix(self.tr(" min"))
        self.keep_alive.setSpecialValueText(self.tr("Unload right away"))
        self.keep_alive.setValue(round(settings.engine.keep_alive_s / 60))
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(AUTO_LAYERS, 999)
        self.gpu_layers.setSpecialValueText(self.tr("Auto (fit to this machine)"))
        self.gpu_layers.setValue(
            AUTO_LAYERS if settings.engine.gpu_layers is None else settings.engine.gpu_layers
        )
        self.context_length = QSpinBox()
        self.context_length.setRange(AUTO_CONTEXT, 1_048_576)
        self.context_length.setSingleStep(1024)
        self.context_length.setSpecialValueText(self.tr("Auto (fit to this machine)"))
        self.context_length.setValue(settings.engine.context_length or AUTO_CONTEXT)
        self.offline = QCheckBox(self.tr("Offline: make no network connection at all"))
        self.offline.setChecked(settings.offline)
        self.retention = QSpinBox()
        self.retention.setRange(0, 3650)
        self.retention.setSuffix(self.tr(" days"))
        self.retention.setSpecialValueText(self.tr("Keep chats forever"))
        self.retention.setValue(settings.retention_days or 0)
        self.theme = QComboBox()
        for label, value in (
            (self.tr("System"), "system"),
            (self.tr("Light"), "light"),
            (self.tr("Dark"), "dark"),
        ):
            self.theme.addItem(label, value)
        self.theme.setCurrentIndex(self.theme.findData(settings.theme))
        self.language = QComboBox()
        self.language.addItem("English", "en")
        self.language.addItem("简体中文", "zh_CN")
        self.language.setCurrentIndex(self.language.findData(settings.language))
        self.keep_in_tray = QCheckBox(
            self.tr("Closing the window keeps the server running in the tray")
        )
        self.keep_in_tray.setChecked(settings.keep_in_tray)

        self._fields: dict[str, QWidget] = {
            "engine.keep_alive_s": self.keep_alive,
            "engine.gpu_layers": self.gpu_layers,
            "engine.context_length": self.context_length,
            "offline": self.offline,
            "retention_days": self.retention,
            "theme": self.theme,
            "language": self.language,
            "keep_in_tray": self.keep_in_tray,
        }

    def _locked_note(self, key: str, widget: QWidget) -> QWidget:
        if not self._effective.is_locked(key):
            return widget
        widget.setEnabled(False)
        widget.setToolTip(self.tr("set by your organization"))
        box = QWidget()
        row = QVBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(widget)
        hint = QLabel(self.tr("set by your organization"))
        hint.setObjectName("Muted")
        row.addWidget(hint)
        return box

    def values(self) -> dict[str, object]:
        """Every field as the setting value it stands for (None = automatic/default)."""
        return {
            "engine.keep_alive_s": float(self.keep_alive.value() * 60),
            "engine.gpu_layers": None
            if self.gpu_layers.value() == AUTO_LAYERS
            else self.gpu_layers.value(),
            "engine.context_length": None
            if self.context_length.value() == AUTO_CONTEXT
            else self.context_length.value(),
            "offline": self.offline.isChecked(),
            "retention_days": self.retention.value() or None,
            "theme": str(self.theme.currentData()),
            "language": str(self.language.currentData()),
            "keep_in_tray": self.keep_in_tray.isChecked(),
        }

    def changes(self) -> dict[str, object]:
        """The unlocked values that differ from the settings in force."""
        settings = self._effective.settings
        return {
            key: value
            for key, value in self.values().items()
            if not self._effective.is_locked(key) and setting_value(settings, key) != value
        }

    def save(self) -> EffectiveSettings:
        """Write the changes to ``settings.toml``; returns the settings now in force."""
        changes = self.changes()
        self.location.commit()  # first: a folder that cannot be used stops the whole save
        if changes:
            save_user_settings(self._paths, changes, self._effective)
        return apply_changes(self._effective, changes)
