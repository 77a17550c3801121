"""The "Data location" row of Settings: where chats, indexes, keys and models live, and
choosing a new folder (moved at the next start, see desktop/datafolder/_relocate.py)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.config import EffectiveSettings, Paths
from desktop.base.errors import ConfigError
from desktop.base.filebytes import format_bytes
from desktop.datafolder import PendingMove, cancel_move, check_target, pending_move, request_move
from desktop.ui.common.error_text import error_text


def folder_size(folder: Path) -> int:
    """Bytes under ``folder`` (models dominate: a few large files, so this is quick)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


class DataLocationRow(QWidget):
    """Shows the data folder; "Change…" picks a new one, "Keep here" forgets the choice."""

    def __init__(
        self, paths: Paths, effective: EffectiveSettings, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._paths = paths
        self._effective = effective
        self._choice: PendingMove | None = pending_move(paths)
        self.path_label = QLabel(str(paths.data_dir))
        self.path_label.setObjectName("Muted")
        self.path_label.setWordWrap(True)
        self.path_label.setAccessibleName(self.tr("Data location"))
        self.pending_label = QLabel()
        self.pending_label.setWordWrap(True)
        self.change_button = QPushButton(self.tr("Change…"))
        self.change_button.setAccessibleName(self.tr("Choose a new data folder"))
        self.change_button.setToolTip(
            self.tr(
                "Move chats, document indexes, API keys and downloaded models to another folder"
            )
        )
        self.change_button.clicked.connect(self._ask)
        self.keep_button = QPushButton(self.tr("Keep here"))
        self.keep_button.setAccessibleName(self.tr("Cancel the data move"))
        self.keep_button.clicked.connect(self.keep_here)
        locked = effective.is_locked("data_location")
        self.change_button.setEnabled(not locked)
        if locked:
            self.change_button.setToolTip(self.tr("set by your organization"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.path_label, 1)
        top.addWidget(self.change_button)
        layout.addLayout(top)
        bottom = QHBoxLayout()
        bottom.addWidget(self.pending_label, 1)
        bottom.addWidget(self.keep_button)
        layout.addLayout(bottom)
        if locked:
            hint = QLabel(self.tr("set by your organization"))
            hint.setObjectName("Muted")
            layout.addWidget(hint)
        self._show_choice()

    def choice(self) -> PendingMove | None:
        """The move that Save will request (None: the data stays where it is)."""
        return self._choice

    def choose(self, folder: Path, *, move: bool) -> str | None:
        """Pick ``folder``; returns why it cannot be used, or None when it can."""
        try:
            check_target(self._paths.data_dir, folder, move=move)
        except ConfigError as exc:
            return error_text(exc)
        self._choice = PendingMove(folder.resolve(), move)
        self._show_choice()
        return None

    def keep_here(self) -> None:
        """Forget the chosen folder: the data stays where it is."""
        self._choice = None
        self._show_choice()

    def commit(self) -> None:
        """Record the chosen move for the next start (or withdraw an earlier one)."""
        if self._choice is None:
            cancel_move(self._paths)
        else:
            request_move(self._paths, self._effective, self._choice.target, move=self._choice.move)

    def _show_choice(self) -> None:
        choice = self._choice
        if choice is None:
            self.pending_label.setText("")
        elif choice.move:
            self.pending_label.setText(
                self.tr("Your data moves to {0} when EdgeDesk next starts.").format(choice.target)
            )
        else:
            self.pending_label.setText(
                self.tr("EdgeDesk switches to {0} (nothing is copied) when it next starts.").format(
                    choice.target
                )
            )
        self.pending_label.setVisible(choice is not None)
        self.keep_button.setVisible(choice is not None)

    def _ask(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self, self.tr("Choose a folder for your data"), str(self._paths.data_dir.parent)
        )
        if not chosen:
            return
        size = format_bytes(folder_size(self._paths.data_dir))
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Change data location"),
            self.tr("Move your chats, document indexes, API keys and models ({0}) to {1}?").format(
                size, chosen
            ),
            parent=self,
        )
        move = box.addButton(self.tr("Move my data"), QMessageBox.ButtonRole.AcceptRole)
        use = box.addButton(self.tr("Use the folder as it is"), QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() not in (move, use):
            return
        problem = self.choose(Path(chosen), move=box.clickedButton() is move)
        if problem is not None:
            QMessageBox.warning(self, self.tr("Cannot use this folder"), problem)
