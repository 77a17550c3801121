"""Backing up the database key in the window: a file, or a recovery code to write down.

A keyring-encrypted database is readable only while the OS keyring keeps its key; a new
user profile or a reset keyring loses it, and then only a backup opens the data again.
So the window offers this dialog once per key (``offer_key_backup``: at the first start
that encrypted silently, after the Settings switch turned encryption on; the key file
remembers the offer, ``AtRest.backup_offered``), and Settings opens it again on demand.
Both ways back are ``edgedesk data import-key FILE`` and ``edgedesk data import-key --code``,
and the window's own ``key_restore.KeyRestoreDialog``, offered at start when the key is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.base.private import private_file
from desktop.ui.common.error_text import error_text
from desktop.ui.common.text_fit import TextFitDialog

if TYPE_CHECKING:
    from desktop.store import AtRest

KEY_FILE_NAME = "edgedesk-key.txt"


class KeyBackupDialog(TextFitDialog):
    """Save the key to a file or show its recovery code. UI thread only.

    ``export_text`` gives the key file's text, ``recovery_code`` the code; each is read
    only when the user asks for it.
    """

    def __init__(
        self,
        export_text: Callable[[], str],
        recovery_code: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._export_text = export_text
        self._recovery_code = recovery_code
        self.setWindowTitle(self.tr("Back up your encryption key"))
        self.setMinimumWidth(520)
        self.intro = intro = QLabel(
            self.tr(
                "Your conversations and documents are encrypted, and the key is kept only "
                "in this computer's keyring. If the keyring loses it (a new user account, "
                "a reset keyring, a reinstalled system), nothing can open your data again "
                "except a backup of the key. Keep one somewhere safe, off this computer."
            )
        )
        intro.setWordWrap(True)
        self.save_button = QPushButton(self.tr("Save to a file…"))
        self.code_button = QPushButton(self.tr("Show a recovery code"))
        self.code = QLabel("")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(font.pointSizeF() * 1.3)  # read off the screen, letter by letter
        self.code.setFont(font)
        self.code.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.code.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.code.setContentsMargins(0, 8, 0, 8)
        self.code.setAccessibleName(self.tr("Recovery code"))
        self.code.setVisible(False)
        self.note = QLabel("")
        self.note.setObjectName("Muted")
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self.problem = QLabel("")
        self.problem.setObjectName("Error")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        self.close_button.setText(self.tr("Not now"))
        buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.code_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.save_button.clicked.connect(self.save_to_file)
        self.code_button.clicked.connect(self.show_code)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.code)
        layout.addWidget(self.note)
        layout.addWidget(self.problem)
        layout.addSpacing(8)
        layout.addWidget(buttons)

    def code_text(self) -> str:
        """The recovery code shown (empty until asked for), as one line."""
        return " ".join(self.code.text().split()).replace(" ", "-")

    def _done(self, note: str) -> None:
        self.problem.setVisible(False)
        self.note.setVisible(True)
        self.say(self.note, note)
        self.close_button.setText(self.tr("Done"))

    def _failed(self, message: str) -> None:
        self.problem.setVisible(True)
        self.say(self.problem, message)

    @Slot()
    def show_code(self) -> None:
        """Show the recovery code, to be written down."""
        try:
            code = self._recovery_code()
        except EdgeDeskError as exc:
            self._failed(error_text(exc))
            return
        groups = code.split("-")
        half = (len(groups) + 1) // 2
        # Two rows of groups, split where a reader expects it, not where the width ends.
        self.code.setText("-".join(groups[:half]) + "\n" + "-".join(groups[half:]))
        self.code.setVisible(True)
        self._done(
            self.tr(
                "Write this code down and keep it off this computer. If the key is ever "
                "lost, EdgeDesk asks for this code when it starts ('edgedesk data "
                "import-key --code' takes it back too)."
            )
        )

    @Slot()
    def save_to_file(self) -> None:
        """Ask where, then write the key file (only the user may read it)."""
        name, _chosen = QFileDialog.getSaveFileName(
            self, self.tr("Save the encryption key"), str(Path.home() / KEY_FILE_NAME)
        )
        if not name:
            return
        self.write_to(Path(name))

    def write_to(self, target: Path) -> bool:
        """Write the key file to ``target``; says how it went in the dialog."""
        try:
            text = self._export_text()
            private_file(target)
            target.write_text(text, encoding="utf-8")
        except EdgeDeskError as exc:
            self._failed(error_text(exc))
            return False
        except OSError as exc:
            self._failed(
                self.tr("The key was not saved: %1").replace("%1", exc.strerror or str(exc))
            )
            return False
        self._done(
            self.tr(
                "Saved to %1. Anyone with this file and your data can read it: move it off "
                "this computer (a password manager, a USB stick in a drawer). If the key "
                "is ever lost, EdgeDesk asks for this file when it starts ('edgedesk data "
                "import-key FILE' restores it too)."
            ).replace("%1", str(target))
        )
        return True


def key_backup_dialog(at_rest: AtRest, parent: QWidget | None = None) -> KeyBackupDialog:
    """The backup dialog for the database ``at_rest`` describes (not shown yet)."""
    return KeyBackupDialog(at_rest.export_key, at_rest.recovery_code, parent)


def offer_key_backup(at_rest: AtRest, parent: QWidget | None = None) -> KeyBackupDialog | None:
    """Open the backup dialog if this key was never offered (remembered: asked once)."""
    if not at_rest.backup_due():
        return None
    at_rest.backup_offered()
    dialog = key_backup_dialog(at_rest, parent)
    dialog.open()
    return dialog
