"""The window's start: build the composition root, apply the theme and language, open the
window and run Qt's event loop until it closes or the process gets SIGINT/SIGTERM.

Imported by ``desktop.ui.run_app`` when the window is wanted: ``desktop/ui/__init__.py``
has already made None immortal (``pyside_fixes``) before this module loads PySide6.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType

import psutil
from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QProgressDialog

from desktop.base.config import HOME_ENV, Paths, user_path
from desktop.base.crash import report_crash
from desktop.base.errors import EdgeDeskError
from desktop.root.startup import context_for
from desktop.store import EXIT_KEY
from desktop.ui.common.error_text import error_text
from desktop.ui.common.look import apply_theme, install_translator
from desktop.ui.settings.encryption import encrypt_at_start, unlock_at_start
from desktop.ui.shell.gc_guard import GuiThreadCollector
from desktop.ui.shell.main_window import MainWindow
from desktop.ui.shell.restart import relaunch
from desktop.ui.shell.single_instance import SingleInstance
from desktop.ui.shell.system_libraries import window_library_problem

# Python runs signal handlers only between bytecodes; while Qt's C++ loop waits for
# events none run, so a timer hands control back to Python this often.
SIGNAL_POLL_MS = 150


def _install_signal_handlers(app: QApplication, window: MainWindow) -> QTimer:
    def close_and_quit() -> None:
        window.quit_app()  # not close(): with a tray icon that would only hide the window
        app.quit()

    def close(_signum: int, _frame: FrameType | None) -> None:
        # Queued, not direct: a signal that lands before app.exec() starts would
        # otherwise close the window too early and leave exec() waiting forever.
        QTimer.singleShot(0, close_and_quit)

    signal.signal(signal.SIGINT, close)
    signal.signal(signal.SIGTERM, close)
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(SIGNAL_POLL_MS)
    return timer


def _install_crash_net(app: QApplication) -> Callable[..., object]:
    """A bug in a slot becomes a logged traceback and one clear message, not a dead window.

    Qt calls Python slots from its C++ loop, where an exception cannot reach ``main``'s
    net: PySide hands it to ``sys.excepthook``, which would only print it.
    """

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            app.quit()
            return
        line = report_crash(exc.with_traceback(tb), "window")
        sys.stderr.write(f"edgedesk: error: {line}\n")
        sys.stderr.flush()
        if app.platformName() not in ("offscreen", "minimal"):  # nobody could close it
            QMessageBox.critical(None, "EdgeDesk", line)

    previous = sys.excepthook
    sys.excepthook = hook
    return previous


def _process_age_s() -> float:
    """Seconds since this process started (10 ms resolution on Linux)."""
    try:
        # psutil's create_time() adds a boot time rounded to whole seconds; the kernel's
        # own counters give the age exactly.
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time() - psutil.Process().create_time()


def _move_progress() -> Callable[[int, int], None]:
    """Shows a data move (requested in Settings) that copies across drives at start-up."""
    dialog: list[QProgressDialog] = []

    def report(done: int, total: int) -> None:
        if not dialog:
            box = QProgressDialog(
                QCoreApplication.translate("run_app", "Moving your data…"), "", 0, 1000
            )
            box.setCancelButton(None)  # all or nothing: a half-copied folder is worse
            box.setWindowTitle("EdgeDesk")
            box.setMinimumDuration(0)
            dialog.append(box)
        dialog[0].setValue(done * 1000 // total if total else 1000)
        QCoreApplication.processEvents()

    return report


def _one_instance(to_open: str | None) -> SingleInstance | None:
    """This launch's claim on its config folder, or None when it handed over to the
    window already open there (which shows itself and opens ``to_open``)."""
    instance = SingleInstance(Paths.from_env().config_dir)
    if instance.claim():
        return instance
    if to_open:
        to_open = str(user_path(to_open).absolute())  # the other's cwd differs
    if instance.hand_over(to_open):
        sys.stderr.write(
            "edgedesk: EdgeDesk is already open; its window was brought to the front\n"
        )
        sys.stderr.flush()
        return None
    if instance.claim():  # the other window closed while we asked
        return instance
    raise EdgeDeskError(
        "another EdgeDesk window uses this data folder but does not answer; close it (or "
        f"end its process), or set {HOME_ENV} to use another folder"
    )


def run_app(args: argparse.Namespace) -> int:
    """Open the EdgeDesk window; returns the process exit code once it closes."""
    if QApplication.instance() is None:
        # Qt aborts with a paragraph about plugins when X11 libraries are missing; say
        # which package to install instead, before Qt is started.
        problem = window_library_problem(os.environ, sys.platform)
        if problem is not None:
            raise EdgeDeskError(problem)
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    to_open = getattr(args, "open", None)
    instance = _one_instance(to_open)
    if instance is None:
        return 0  # the window already open over this data shows itself instead
    try:
        context = context_for(args, apply_moves=True, move_progress=_move_progress())
        # First: the passphrase prompt below speaks the user's language too, and shows
        # in the theme (an error in red, as everywhere).
        translator = install_translator(app, context.settings.language)
        apply_theme(app, context.settings.theme)
        # Encrypted with a passphrase: asked once per session, before the data opens.
        if not unlock_at_start(context):
            return EXIT_KEY
        # An encrypted database whose key the keyring lost: restored from its recovery
        # code or key file (a policy refusal is said in a box); a policy that requires
        # encryption where no keyring works asks a passphrase.
        if not encrypt_at_start(context):
            return EXIT_KEY
    except EdgeDeskError as exc:  # e.g. a broken settings file, a data drive not connected
        if app.platformName() not in ("offscreen", "minimal"):  # nobody could close it
            QMessageBox.critical(None, "EdgeDesk", error_text(exc))
        raise
    app.setApplicationName("EdgeDesk")
    window = MainWindow(context)
    instance.setParent(window)
    instance.requested.connect(window.bring_to_front)
    # Hidden to the tray is not closed: the app quits from the tray menu or a signal.
    app.setQuitOnLastWindowClosed(window.tray is None)
    window.show()
    window.models.when_listed(window.start_dialogs)  # rows are read on a worker
    if to_open:
        window.bring_to_front(to_open)
    _install_signal_handlers(app, window)
    previous_hook = _install_crash_net(app)
    collector = GuiThreadCollector(app)
    collector.start()
    # One line for people measuring start-up (and for the test that waits for the window).
    sys.stderr.write(
        f"edgedesk: window open {_process_age_s() * 1000:.0f} ms after the process started\n"
    )
    sys.stderr.flush()
    try:
        code = app.exec()
        window.shutdown()
    finally:
        instance.release()
        collector.stop()
        sys.excepthook = previous_hook
    del translator
    if window.restart_requested:  # a new language: the user asked to restart now
        relaunch()
    return code
