"""The read-only "Hardware and GPU" section of Settings: ``edgedesk doctor`` in the window.

Built on the window's thread; the report itself is made on a worker (it may run
``vulkaninfo`` or ``nvidia-smi``) and arrives through ``show_report``.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QGroupBox, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.ui.settings.hardware_report import report_lines


class HardwarePanel(QGroupBox):
    """The backend, the devices, why a GPU is not used and each model's fit (read-only)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTitle(self.tr("Hardware and GPU"))
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName(self.tr("Hardware and GPU report"))
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setMinimumHeight(150)
        self.text.setPlainText(self.tr("Checking this machine…"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)

    @Slot(str, object)
    def show_report(self, _key: str, report: object) -> None:
        """Show ``doctor_report``'s data worded as ``edgedesk doctor`` words it, translated."""
        if isinstance(report, Mapping):
            report = report_lines(report)
        self.text.setPlainText(
            "\n".join(str(line) for line in report) if isinstance(report, list) else str(report)
        )

    @Slot(str, str)
    def show_failure(self, _key: str, message: str) -> None:
        """Say the report could not be made, and why."""
        self.text.setPlainText(self.tr("Could not read the hardware: {0}").format(message))
