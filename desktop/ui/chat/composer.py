"""Where a chat's next message is written: the text box, its attachments, Send and Stop.

Ctrl+Enter is read from the text box's own key events (not a window shortcut), so it
works whichever window is active, e.g. with a dialog or a screen reader in front.
Window's thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QToolButton, QVBoxLayout, QWidget

from desktop.ui.chat.attach import AttachmentChips, MessageInput
from desktop.ui.common.look import icon


class Composer(QWidget):
    """The message box with Attach, Send and Stop; ``send_requested`` on Send or
    Ctrl+Enter, ``attach_requested`` on Attach (a paste or drop of a picture or file
    comes as the input's ``pasted``)."""

    send_requested = Signal()
    stop_requested = Signal()
    attach_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chips = AttachmentChips()
        self.attach_button = QToolButton()
        self.attach_button.setIcon(icon("attach"))
        self.attach_button.setToolTip(
            self.tr("Attach pictures or documents (or paste, or drop them on the chat)")
        )
        self.attach_button.setAccessibleName(self.tr("Attach files"))
        self.attach_button.clicked.connect(self.attach_requested)
        self.input = MessageInput()
        self.input.setObjectName("Composer")
        self.input.setPlaceholderText(self.tr("Message the model — Ctrl+Enter to send"))
        self.input.setAccessibleName(self.tr("Message"))
        self.input.setFixedHeight(84)
        # Tab moves on to Send and the other controls, as keyboard users expect; a tab
        # character is rarely wanted in a chat message.
        self.input.setTabChangesFocus(True)
        self.send_button = QPushButton(icon("send"), self.tr("Send"))
        self.send_button.setObjectName("Primary")
        self.send_button.setAccessibleName(self.tr("Send message"))
        self.send_button.clicked.connect(self.send_requested)
        self._generating = False
        self._has_model = True  # until the view says which chat is shown
        self.stop_button = QPushButton(icon("stop"), self.tr("Stop"))
        self.stop_button.setAccessibleName(self.tr("Stop generating"))
        self.stop_button.setToolTip(self.tr("Stop (Esc)"))
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.setEnabled(False)
        actions = QVBoxLayout()
        actions.addWidget(self.send_button)
        actions.addWidget(self.stop_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.chips)
        row = QHBoxLayout()
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.input, 1)
        row.addLayout(actions)
        column.addLayout(row)
        self.input.installEventFilter(self)
        self._update_send()

    def set_generating(self, generating: bool) -> None:
        """Send while idle, Stop while an answer is generated."""
        self._generating = generating
        self.stop_button.setEnabled(generating)
        self._update_send()

    def set_has_model(self, has_model: bool) -> None:
        """Send only once the shown chat has a model to answer; until then it says how
        to choose one."""
        self._has_model = has_model
        self._update_send()

    def _update_send(self) -> None:
        self.send_button.setEnabled(self._has_model and not self._generating)
        self.send_button.setToolTip(
            self.tr("Send (Ctrl+Enter)")
            if self._has_model
            else self.tr(
                "Choose a model for this chat first: in the box above, or import or "
                "download one on the Models screen."
            )
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+Enter in the text box sends."""
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
            if ctrl and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.send_requested.emit()
                return True
        return super().eventFilter(watched, event)
