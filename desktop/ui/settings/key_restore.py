"""Restoring the database key in the window, as ``edgedesk data import-key`` does: a
recovery code typed (or pasted), or the key file ``export-key`` wrote.

Offered at start when the database is encrypted and this user's OS keyring no longer
holds its key (a new user profile, a reset keyring); the key is checked against the
database before it is kept (``AtRest.import_key``, the command's own function).
Window's thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.ui.common.error_text import error_text
from desktop.ui.common.text_fit import TextFitDialog


class KeyRestoreDialog(TextFitDialog):
    """Type a recovery code or pick a key file; accepted once the key opens the data.

    ``import_key`` is ``AtRest.import_key``: it checks the key, then keeps it in the OS
    keyring, raising an EdgeDeskError (shown in red here) when it cannot.
    """

    def __init__(
        self, import_key: Callable[[str], None], why: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._import_key = import_key
        self.setWindowTitle(self.tr("Restore your encryption key"))
        self.setMinimumWidth(520)
        self.intro = QLabel(
            self.tr(
                "Your conversations and documents are encrypted, and this computer's "
                "keyring no longer has their key (a new user account or a reset keyring). "
                "Type the recovery code you wrote down, or open the key file you saved."
            )
        )
        self.intro.setWordWrap(True)
        self.why = QLabel(why)
        self.why.setObjectName("Muted")
        self.why.setWordWrap(True)
        self.why.setVisible(bool(why))
        self.code = QLineEdit()
        self.code.setPlaceholderText("ABCD-EFGH-…")
        self.code.setAccessibleName(self.tr("Recovery code"))
        self.file_button = QPushButton(self.tr("Open a key file…"))
        self.file_button.clicked.connect(self._pick_file)
        row = QHBoxLayout()
        row.addWidget(self.code, 1)
        row.addWidget(self.file_button)
        self.error = QLabel("")
        self.error.setObjectName("Error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.restore_button = buttons.addButton(
            self.tr("Restore the key"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        buttons.accepted.connect(self.restore_code)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.why)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def restore_code(self) -> bool:
        """Restore from the code typed; False (the reason in red) when it is refused."""
        return self.restore(self.code.text())

    def _pick_file(self) -> None:
        name, _filter = QFileDialog.getOpenFileName(
            self, self.tr("Open the key file"), str(Path.home())
        )
        if not name:
            return
        try:
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._refused(self.tr("Cannot read %1: %2").replace("%1", name).replace("%2", str(exc)))
            return
        self.restore(text)

    def restore(self, text: str) -> bool:
        """Check ``text`` (a code or a key file's text) and keep it; accept on success."""
        if not text.strip():
            self._refused(self.tr("Type the recovery code first, or open the key file."))
            return False
        try:
            self._import_key(text)
        except EdgeDeskError as exc:
            self._refused(error_text(exc))
            return False
        self.accept()
        return True

    def _refused(self, message: str) -> None:
        self.error.setVisible(True)
        self.say(self.error, message)
