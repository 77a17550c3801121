"""The Server screen's live request list: local relative times, translated, filterable.

Each access record (never content) is one line: when ("2 min ago", in the user's
language), method and route, status, model, tokens, time and key. A filter box keeps
the lines whose key, model or status contain what is typed; the times are written again
every half minute.
"""

from __future__ import annotations

import time
from collections import deque
from datetime import datetime

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QWidget

from desktop.server import AccessRecord

LOG_LINES = 500  # the live list keeps the last requests only; the file keeps them all
RETIME_MS = 30_000


def relative_time(iso: str, now: float | None = None) -> str:
    """``iso`` (an access record's UTC time) as the user reads it: "2 min ago", local."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    now = time.time() if now is None else now
    age = now - when.timestamp()
    if age < 45:
        return QCoreApplication.translate("RequestList", "just now")
    if age < 3600:
        return QCoreApplication.translate("RequestList", "%1 min ago").replace(
            "%1", str(max(1, round(age / 60)))
        )
    if age < 24 * 3600:
        return QCoreApplication.translate("RequestList", "%1 h ago").replace(
            "%1", str(round(age / 3600))
        )
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def log_line(record: AccessRecord, now: float | None = None) -> str:
    """One request as the list shows it: when, what, status, model, tokens, time, key."""
    who = record.key_name or "-"
    model = record.model or "-"
    line = (
        f"{relative_time(record.time, now)}  {record.method} {record.route}  {record.status}  "
        f"{model}  "
        + QCoreApplication.translate("RequestList", "%1→%2 tokens")
        .replace("%1", str(record.tokens_in))
        .replace("%2", str(record.tokens_out))
        + f"  {record.latency_ms:.0f} ms  "
        + QCoreApplication.translate("RequestList", "key %1").replace("%1", who)
    )
    # A 200 whose stream then failed: the status alone would read as a success.
    if record.error:
        return (
            line
            + "  "
            + QCoreApplication.translate("RequestList", "failed mid-stream: %1").replace(
                "%1", record.error
            )
        )
    return line


def matches(record: AccessRecord, text: str) -> bool:
    """Whether the filter ``text`` is in the record's key, model, status or error code."""
    needle = text.strip().lower()
    if not needle:
        return True
    fields = (record.key_name, record.model, str(record.status), record.error_code)
    return any(needle in (f or "").lower() for f in fields)


class RequestList(QPlainTextEdit):
    """The last ``LOG_LINES`` requests, newest last, with a filter box (``filter_box``)
    to put beside it; called on the window's thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(LOG_LINES)
        self._records: deque[AccessRecord] = deque(maxlen=LOG_LINES)
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText(self.tr("Filter by key, model or status"))
        self.filter_box.setAccessibleName(self.tr("Filter requests"))
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(lambda _text: self.redraw())
        self._timer = QTimer(self)
        self._timer.setInterval(RETIME_MS)
        self._timer.timeout.connect(self.redraw)
        self._timer.start()

    def add(self, record: AccessRecord) -> None:
        """Show one more request (if it passes the filter)."""
        self._records.append(record)
        if matches(record, self.filter_box.text()):
            self.appendPlainText(log_line(record))

    def redraw(self) -> None:
        """Write every kept line again: the filter changed, or the times moved on."""
        if not self._records:
            return
        text = self.filter_box.text()
        now = time.time()
        bar = self.verticalScrollBar()
        at_end = bar.value() == bar.maximum()
        self.setPlainText("\n".join(log_line(r, now) for r in self._records if matches(r, text)))
        if at_end:
            bar.setValue(bar.maximum())
