"""The desktop window (the only package that imports PySide6).

``run_app`` is what bare ``edgedesk`` calls (``desktop/ui/shell/app.py``): it builds the
composition root, applies the theme and language, opens the window and runs Qt's event
loop until the window closes or the process gets SIGINT/SIGTERM.

The one thing done when this package is imported: on Python 3.11 PySide6's void methods
wear None's reference count down until the interpreter aborts (``shell/pyside_fixes``),
so None is made immortal here, before any module of the window can load PySide6 (every
``desktop.ui.*`` import runs this file first).
"""

from __future__ import annotations

import argparse

from desktop.ui.shell.pyside_fixes import make_none_immortal

__all__ = ["run_app"]

make_none_immortal()


def run_app(args: argparse.Namespace) -> int:
    """Open the EdgeDesk window; returns the process exit code once it closes."""
    from desktop.ui.shell.app import run_app as run  # Qt loads here, not on import

    return run(args)
