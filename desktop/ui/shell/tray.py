"""The tray icon that keeps the local server running while the window is closed."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.ui.common.look import icon


def hides_on_close(
    *, keep_in_tray: bool, tray_available: bool, server_running: bool, quitting: bool
) -> bool:
    """Whether closing the window should hide it to the tray instead of quitting.

    Only while the server runs (nothing else needs the app without its window), only with
    a tray to bring it back from, and never when the user or a signal asked to quit.
    """
    return keep_in_tray and tray_available and server_running and not quitting


class Tray(QObject):
    """A tray icon with Show and Quit; exists only where the desktop has a tray."""

    show_requested = Signal()
    quit_requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(icon("app"), self)
        self.icon.setToolTip("EdgeDesk")
        self.menu = QMenu()
        show = self.menu.addAction(self.tr("Show EdgeDesk"))
        show.triggered.connect(self.show_requested)
        quit_action = self.menu.addAction(self.tr("Quit (stops the server)"))
        quit_action.triggered.connect(self.quit_requested)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        # Without a notification service Qt draws the message itself, over the icon on a
        # top panel: a click there must bring the window back just like the icon would.
        self.icon.messageClicked.connect(self.show_requested)
        self._told = False
        self.icon.show()

    def available(self) -> bool:
        """Whether the desktop shows the icon now (a tray can go away after start)."""
        return self.icon.isVisible() and QSystemTrayIcon.isSystemTrayAvailable()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.show_requested.emit()

    def notify_hidden(self) -> None:
        """Tell the user, the first time only, that the server keeps running."""
        if self._told:
            return
        self._told = True
        self.icon.showMessage(
            "EdgeDesk", self.tr("The server keeps running. Quit from the tray icon's menu.")
        )
