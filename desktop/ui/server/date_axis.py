"""The charts' time axis, its dates written in the window's language.

pyqtgraph's ``DateAxisItem`` writes its labels with ``strftime``, so months and weekdays
read "Dec" and "Sat 05" whatever the window's language. This axis keeps its ticks and
writes each label with Qt's format for the same fields, in the locale of the translation
the window loaded (``window_locale``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QDate, QDateTime, QLocale, QTime

# pyqtgraph's tick formats (strftime) and Qt's for the same fields; QLocale names the
# months and weekdays.
QT_FORMATS = {
    "%Y": "yyyy",
    "%b": "MMM",
    "%d": "dd",
    "%a %d": "ddd dd",
    "%H:%M": "HH:mm",
    "%H:%M:%S": "HH:mm:ss",
    "%S.%f": "ss.zzz",
}


def window_locale() -> QLocale:
    """The locale of the translation the window shows (English when none is loaded)."""
    # Each translation names its own locale here, as Qt's QT_LAYOUT_DIRECTION names its
    # direction: the window's language is whatever translation is installed.
    return QLocale(QCoreApplication.translate("DateAxis", "en_US"))


def local_label(when: float, qt_format: str, locale: QLocale) -> str:
    """Unix time ``when`` as local time in ``qt_format``, worded in ``locale``."""
    try:
        d = datetime.fromtimestamp(when)
    except (OverflowError, ValueError, OSError):
        return ""
    stamp = QDateTime(
        QDate(d.year, d.month, d.day), QTime(d.hour, d.minute, d.second, d.microsecond // 1000)
    )
    return locale.toString(stamp, qt_format)


class LocaleDateAxis(pg.DateAxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """A bottom date axis (local time) whose labels follow ``window_locale``; window's
    thread only, as every pyqtgraph item."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        """The labels of ``values``: pyqtgraph's fields, worded in the window's language."""
        specs: Any = self.zoomLevel.tickSpecs
        spec = next((s for s in specs if s.spacing == spacing), None)
        qt_format = None if spec is None else QT_FORMATS.get(spec.format)
        if qt_format is None or self.utcOffset is not None:
            return list(super().tickStrings(values, scale, spacing))
        locale = window_locale()
        return [local_label(v, qt_format, locale) for v in values]
