"""Choosing a new database passphrase in the window: typed twice, refused when they differ.

A typo in a passphrase typed once would lock the user out of their own data, so every
place that sets one (the Settings switch, the no-keyring offer) asks for it twice.
``NewPassphraseDialog`` is the offer made when no OS keyring can keep a key: the
passphrase is asked right there instead of pointing at a command-line flag.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.common.text_fit import TextFitDialog


def passphrase_problem(first: str, again: str) -> str | None:
    """What is wrong with a new passphrase typed as ``first`` then ``again`` (None: fine)."""
    if not first:
        return QCoreApplication.translate("new_passphrase", "Enter a passphrase.")
    if first != again:
        return QCoreApplication.translate(
            "new_passphrase",
            "The two passphrases differ. Type the same passphrase twice; nothing was changed.",
        )
    return None


def password_field(name: str, placeholder: str) -> QLineEdit:
    """A line edit that hides what is typed, named for screen readers."""
    field = QLineEdit()
    field.setEchoMode(QLineEdit.EchoMode.Password)
    field.setAccessibleName(name)
    field.setPlaceholderText(placeholder)
    return field


class NewPassphraseDialog(TextFitDialog):
    """No OS keyring here: encrypt with a passphrase instead, typed twice. UI thread only.

    Stays open saying what is wrong until the two entries match; ``passphrase()`` is the
    accepted one.
    """

    def __init__(self, parent: QWidget | None = None, *, required: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Encrypt with a passphrase"))
        self.setMinimumWidth(460)
        why = (
            self.tr(
                "Your organization requires encrypted data (policy EncryptAtRest), and "
                "this computer has no OS keyring to keep the encryption key in."
            )
            if required
            else self.tr(
                "This computer has no OS keyring to keep the encryption key in, so your "
                "data was not encrypted."
            )
        )
        what = self.tr(
            "Choose a passphrase instead: EdgeDesk asks for it once each time it "
            "starts. Without it nobody, not even you, can open your conversations "
            "again, so keep it somewhere safe."
        )
        # Two sentences joined as the language joins them (Chinese: no space).
        self.intro = QLabel(self.tr("%1 %2").replace("%1", why).replace("%2", what))
        self.intro.setWordWrap(True)
        self.field = password_field(self.tr("Passphrase"), self.tr("Passphrase"))
        self.again = password_field(self.tr("Passphrase again"), self.tr("Passphrase again"))
        self.problem = QLabel("")
        self.problem.setObjectName("Error")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText(self.tr("Encrypt"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.field)
        layout.addWidget(self.again)
        layout.addWidget(self.problem)
        layout.addSpacing(8)
        layout.addWidget(buttons)
        self.field.setFocus()

    def passphrase(self) -> str:
        """The passphrase typed (the same twice once the dialog was accepted)."""
        return self.field.text()

    def accept(self) -> None:
        """Close only when the two entries are the same, non-empty passphrase."""
        problem = passphrase_problem(self.field.text(), self.again.text())
        if problem is None:
            super().accept()
            return
        self.problem.setVisible(True)
        self.say(self.problem, problem)
        self.again.clear()
        target = self.field if not self.field.text() else self.again
        target.setFocus()
