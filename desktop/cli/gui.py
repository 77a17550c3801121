"""Bare ``edgedesk``: start the desktop window when the GUI is installed."""

from __future__ import annotations

import argparse
import importlib.util

from desktop.base.errors import EdgeDeskError


def launch_gui(args: argparse.Namespace) -> int:
    """Open the main window; explain what to run instead if the GUI is unavailable."""
    if importlib.util.find_spec("desktop.ui") is None:
        raise EdgeDeskError(
            "the desktop window is not part of this build yet; use 'edgedesk --help' "
            "for the command-line tools"
        )
    ui = importlib.import_module("desktop.ui")
    result: int = ui.run_app(args)
    return result
