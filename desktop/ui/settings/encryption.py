"""Encryption at rest in the window: the Settings switch, its progress, the passphrase prompt.

The switch runs the context's ``switch_encryption`` (the migration ``edgedesk data
encrypt|decrypt`` run) on a worker while a progress dialog shows its stages; policy
EncryptAtRest disables it with the reason. A new passphrase is typed twice; where no OS
keyring can keep a key, the progress offers a passphrase right there
(``desktop.ui.settings.new_passphrase``). A database encrypted with a passphrase asks for it once
per session, at start, before anything opens the database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QCoreApplication, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.store import KeyMissing, NoKeyring
from desktop.ui.common.error_text import error_text
from desktop.ui.common.text_fit import TextFitDialog
from desktop.ui.common.workers import Worker, WorkerPool
from desktop.ui.settings.key_restore import KeyRestoreDialog
from desktop.ui.settings.new_passphrase import (
    NewPassphraseDialog,
    passphrase_problem,
    password_field,
)

if TYPE_CHECKING:
    from desktop.store import AtRest, DatabaseKey


def _no_step(_name: str) -> None:
    """Where a switch's stages go when nobody follows them."""


class DatabaseEncryption(Protocol):
    """What the encryption switch, the start-up unlock and the policy's encryption read
    and call (the context's members of the same names)."""

    @property
    def at_rest(self) -> AtRest:
        """The database's encryption state and key."""

    @property
    def database_key(self) -> DatabaseKey | None:
        """The database key, settled (encrypting now where policy requires it)."""

    def unlock(self, passphrase: str) -> None:
        """Use ``passphrase`` from now on once it opens the database (else KeyRejected)."""

    def choose_passphrase(self, passphrase: str) -> None:
        """Encrypt with this new ``passphrase`` where no keyring keeps a key."""

    def switch_encryption(
        self,
        encrypt: bool,
        *,
        passphrase: str | None = None,
        step: Callable[[str], None] = _no_step,
    ) -> None:
        """Encrypt or decrypt the database in place (blocking)."""


STAGES = ("planned", "exported", "verified", "renamed", "done")


class EncryptionSwitch(QWidget):
    """The Settings row: "Encrypt my data at rest", what is in force, an optional passphrase.

    UI thread only. ``wanted()`` is the change asked for (None: none); ``problem()`` what
    stops it (a passphrase typed differently twice). ``backup_button`` (shown for a key
    in the OS keyring) is for the window to connect to the key backup.
    """

    def __init__(
        self, status: Mapping[str, Any], forced: bool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._encrypted = bool(status.get("encrypted"))
        self.check = QCheckBox(self.tr("Encrypt my data at rest"))
        self.check.setChecked(self._encrypted)
        self.check.setAccessibleName(self.tr("Encrypt my data at rest"))
        if self._encrypted:
            where = (
                self.tr("your passphrase")
                if status.get("key_source") == "passphrase"
                else self.tr("the OS keyring")
            )
            text = (
                self.tr("Encrypted (%1); the key is in %2.")
                .replace("%1", str(status.get("cipher")))
                .replace("%2", where)
            )
        else:
            text = self.tr(
                "Not encrypted: conversations and document indexes are plain "
                "files, readable by anyone who gets a copy."
            )
        self.state = QLabel(text)
        self.state.setObjectName("Muted")
        self.state.setWordWrap(True)
        self.passphrase = password_field(
            self.tr("Passphrase"), self.tr("Passphrase (optional: instead of the OS keyring)")
        )
        self.passphrase.setVisible(False)
        # Typed twice: a typo in a passphrase typed once locks the user out.
        self.again = password_field(self.tr("Passphrase again"), self.tr("Passphrase again"))
        self.again.setVisible(False)
        self.mismatch = QLabel("")
        self.mismatch.setObjectName("Error")
        self.mismatch.setWordWrap(True)
        self.mismatch.setVisible(False)
        self.check.toggled.connect(self._toggled)
        self.passphrase.textChanged.connect(self._typed)
        self.backup_button = QPushButton(self.tr("Back up the key…"))
        self.backup_button.setVisible(self._encrypted and status.get("key_source") == "OS keyring")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.check)
        layout.addWidget(self.passphrase)
        layout.addWidget(self.again)
        layout.addWidget(self.mismatch)
        layout.addWidget(self.state)
        layout.addWidget(self.backup_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.reason = ""
        if forced:
            self.reason = self.tr(
                "Your organization requires encrypted data (policy "
                "EncryptAtRest): it cannot be turned off."
            )
            self.check.setEnabled(False)
            self.check.setToolTip(self.reason)
            hint = QLabel(self.reason)
            hint.setObjectName("Muted")
            hint.setWordWrap(True)
            layout.addWidget(hint)

    @Slot(bool)
    def _toggled(self, on: bool) -> None:
        self.passphrase.setVisible(on and not self._encrypted)
        self._typed(self.passphrase.text())

    @Slot(str)
    def _typed(self, text: str) -> None:
        self.again.setVisible(self.passphrase.isVisibleTo(self) and bool(text))
        self._refit()

    def _refit(self) -> None:
        """Fields shown or hidden: the dialog makes room, no field squeezed or cut off."""
        top = self.window()
        if isinstance(top, TextFitDialog):
            top.fit()

    def wanted(self) -> bool | None:
        """True to encrypt, False to decrypt, None when the switch was left as it is."""
        on = self.check.isChecked()
        return None if on == self._encrypted else on

    def problem(self) -> str | None:
        """Why the change cannot be made as typed (said beside the fields), None if it can."""
        self.mismatch.setVisible(False)
        if self.wanted() is not True or not self.passphrase.text():
            return None
        problem = passphrase_problem(self.passphrase.text(), self.again.text())
        if problem is not None:
            self.mismatch.setText(problem)
            self.mismatch.setVisible(True)
            self.again.clear()
            self.again.setFocus()
        self._refit()
        return problem


class SwitchWorker(Worker):
    """Runs the switch on its own thread and signals each stage of the migration.

    ``no_keyring`` instead of ``failed`` when no OS keyring keeps a new key (the window
    offers a passphrase then).
    """

    stage = Signal(str)
    no_keyring = Signal()

    def __init__(self, context: DatabaseEncryption, encrypt: bool, passphrase: str | None) -> None:
        super().__init__("encryption")
        self._context = context
        self._encrypt = encrypt
        self._passphrase = passphrase

    def work(self) -> None:
        """Switch (blocking: the file is copied, checked and renamed)."""
        try:
            self._context.switch_encryption(
                self._encrypt, passphrase=self._passphrase, step=self.stage.emit
            )
        except NoKeyring:
            self.no_keyring.emit()  # nothing was changed; a passphrase is the way on


class SwitchProgress(QProgressDialog):
    """Shows a switch's stages; says how it ended. UI thread only.

    Where no OS keyring keeps the key, ``offer`` (a NewPassphraseDialog) opens once the
    worker ended; accepted, ``retry`` runs the switch again with the passphrase and
    ``next`` is that switch's progress.
    """

    finished_with = Signal(bool)  # whether the switch was made

    def __init__(
        self,
        encrypt: bool,
        parent: QWidget | None = None,
        retry: Callable[[str], SwitchProgress] | None = None,
    ) -> None:
        super().__init__(parent)
        self._encrypt = encrypt
        self._failed = False
        self._no_keyring = False
        self._retry = retry
        self.offer: NewPassphraseDialog | None = None
        self.next: SwitchProgress | None = None
        self.stages: list[str] = []  # the migration's stages so far, as they came
        self.setWindowTitle(self.tr("Encryption"))
        self.setLabelText(
            self.tr("Encrypting your data…") if encrypt else self.tr("Decrypting your data…")
        )
        self.setCancelButton(None)  # all or nothing: the old file stays until the new verifies
        # The chats wait on the database meanwhile: nothing to click in the window.
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setAutoReset(False)  # the full bar stays until the worker has ended
        self.setAutoClose(False)
        self.setRange(0, len(STAGES))
        self.setMinimumDuration(0)
        self.setValue(0)

    @Slot(str)
    def on_stage(self, name: str) -> None:
        """One stage of the migration is done."""
        self.stages.append(name)
        labels = {
            "exported": self.tr("Copied into a new file…"),
            "verified": self.tr("The copy checked row for row…"),
            "renamed": self.tr("The new file took the old one's place…"),
        }
        if name in labels:
            self.setLabelText(labels[name])
        if name in STAGES:
            self.setValue(STAGES.index(name) + 1)

    @Slot(str, str)
    def on_failed(self, _key: str, message: str) -> None:
        """The switch was refused or failed; the data is as it was."""
        self._failed = True
        self.hide()
        QMessageBox.warning(self.parentWidget(), self.tr("Encryption not changed"), message)

    @Slot()
    def on_no_keyring(self) -> None:
        """No keyring keeps a key here: a passphrase is offered once the worker ended."""
        self._failed = self._no_keyring = True

    @Slot()
    def on_done(self) -> None:
        """The worker ended (after ``on_failed`` when it failed)."""
        self.hide()
        self.finished_with.emit(not self._failed)
        if self._no_keyring:
            self.offer = NewPassphraseDialog(self.parentWidget())
            self.offer.accepted.connect(self._with_passphrase)
            self.offer.open()

    @Slot()
    def _with_passphrase(self) -> None:
        if self._retry is not None and self.offer is not None:
            self.next = self._retry(self.offer.passphrase())


def start_switch(
    context: DatabaseEncryption,
    pool: WorkerPool,
    encrypt: bool,
    passphrase: str | None,
    parent: QWidget | None = None,
    *,
    follow: Callable[[SwitchProgress], None] | None = None,
) -> SwitchProgress:
    """Run the switch on a worker behind a progress dialog; returns the dialog.

    ``follow`` is given each switch's dialog before its worker starts, the one run again
    with a passphrase (no keyring) too.
    """

    def retry(chosen: str) -> SwitchProgress:
        return start_switch(context, pool, True, chosen, parent, follow=follow)

    progress = SwitchProgress(encrypt, parent, retry)
    if follow is not None:
        follow(progress)
    worker = SwitchWorker(context, encrypt, passphrase or None)
    worker.stage.connect(progress.on_stage)
    worker.failed.connect(progress.on_failed)
    worker.no_keyring.connect(progress.on_no_keyring)
    worker.done.connect(progress.on_done)
    progress.show()
    pool.start(worker)
    return progress


class PassphraseDialog(TextFitDialog):
    """Asks the database passphrase; stays open saying why until one opens the data.

    ``check`` returns None when the passphrase opens the database, else what is wrong.
    UI thread only.
    """

    def __init__(self, check: Callable[[str], str | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._check = check
        self.setWindowTitle(self.tr("Unlock EdgeDesk"))
        self.setMinimumWidth(460)  # the explanation and an error wrap; none is cut off
        self.intro = intro = QLabel(
            self.tr(
                "Your conversations and documents are encrypted with a "
                "passphrase. Enter it to open them (asked once per session)."
            )
        )
        intro.setWordWrap(True)
        self.field = QLineEdit()
        self.field.setEchoMode(QLineEdit.EchoMode.Password)
        self.field.setAccessibleName(self.tr("Passphrase"))
        self.problem = QLabel("")
        self.problem.setObjectName("Error")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.field)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)

    def accept(self) -> None:
        """Close only when the passphrase opens the data."""
        problem = self._check(self.field.text())
        if problem is None:
            super().accept()
            return
        self.problem.setVisible(True)
        self.say(self.problem, problem)  # the dialog grows to show it whole
        self.field.selectAll()
        self.field.setFocus()


def passphrase_check(context: DatabaseEncryption) -> Callable[[str], str | None]:
    """The check a PassphraseDialog runs: unlocks ``context`` when the passphrase fits."""

    def check(text: str) -> str | None:
        if not text:
            return QCoreApplication.translate("encryption", "Enter the passphrase.")
        try:
            context.unlock(text)
        except EdgeDeskError as exc:
            if getattr(exc, "code", "") == "database_key_rejected":
                return QCoreApplication.translate(
                    "encryption",
                    "That passphrase does not open your data. Nothing was changed; try again.",
                )
            return error_text(exc)
        return None

    return check


def unlock_at_start(context: DatabaseEncryption, parent: QWidget | None = None) -> bool:
    """Ask the passphrase when the database needs one; False when the user cancelled."""
    if not context.at_rest.needs_passphrase():
        return True
    dialog = PassphraseDialog(passphrase_check(context), parent)
    return dialog.exec() == QDialog.DialogCode.Accepted


def encrypt_at_start(context: DatabaseEncryption, parent: QWidget | None = None) -> bool:
    """Settle the database key; where policy requires encryption and no OS keyring works,
    ask a new passphrase (twice) in place. False when the user cancelled (nothing changed).
    """
    try:
        context.database_key  # noqa: B018 - encrypts now when the policy requires it
    except KeyMissing as exc:
        if context.at_rest.needs_passphrase():
            raise  # a passphrase, not a keyring key: unlock_at_start asks it
        # The keyring lost the key: restored here from its backup, as import-key does.
        restore = KeyRestoreDialog(context.at_rest.import_key, error_text(exc), parent)
        if restore.exec() != QDialog.DialogCode.Accepted:
            return False
        context.database_key  # noqa: B018
    except NoKeyring:
        dialog = NewPassphraseDialog(parent, required=True)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        context.choose_passphrase(dialog.passphrase())
        context.database_key  # noqa: B018
    return True
