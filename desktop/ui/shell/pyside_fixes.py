"""Work around a PySide6 defect that would crash the app after long use on Python 3.11.

PySide6 6.12 returns ``None`` from void C++ methods (``QLabel.setText``,
``QCoreApplication.processEvents``…) without taking a reference to it. Python 3.12+
made ``None`` immortal, so nothing happens there; on 3.11 every such call lowers
``None``'s reference count by one, and after a few thousand more calls than Python's own
references the interpreter aborts with "Fatal Python error: none_dealloc". A streaming
chat makes thousands of such calls a minute.

The same happens to ``True`` and ``False`` ("Fatal Python error: bool_dealloc", seen at
the exit of the screenshot script), so they get the same treatment.

The fix does what Python 3.12 does: give these singletons a reference count no program
can exhaust. Remove this module when Python 3.11 support is dropped or PySide6 is fixed.
"""

from __future__ import annotations

import ctypes
import sys

_IMMORTAL = 1 << 40  # ~10^12 void calls before it could matter; 3.12 uses a similar bias


def make_none_immortal() -> bool:
    """Raise the reference counts of ``None``, ``True`` and ``False`` out of reach on
    Python < 3.12; True if applied."""
    if sys.version_info >= (3, 12):
        return False
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every object in release builds of CPython.
        refcount = ctypes.c_ssize_t.from_address(id(singleton))
        if refcount.value < _IMMORTAL:
            refcount.value += _IMMORTAL
    return True
