"""The Server screen's request list: newest first, local relative times, translated,
filterable, and across restarts.

Each request (never content) is one line: when ("2 min ago", in the user's language),
method and route, status, model, tokens, time and key. Live access records come first;
under them, once read, the last ``HISTORY_LINES`` requests the usage store kept from
earlier runs (time, key, route, status, model, tokens, duration: it keeps no method and
no content). A filter box keeps the lines whose key, model or status contain what is
typed; the times are written again every half minute.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QWidget

from desktop.server import AccessRecord

if TYPE_CHECKING:
    from desktop.store import UsageRow

    # A live record, or a stored row of an earlier run.
    Request: TypeAlias = AccessRecord | UsageRow

LOG_LINES = 500  # the list keeps the last requests only; the file keeps them all
HISTORY_LINES = 200  # of earlier runs, read from the usage store when first shown
RETIME_MS = 30_000


def relative_time(iso: str, now: float | None = None) -> str:
    """``iso`` (an access record's UTC time) as the user reads it: "2 min ago", local."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return relative_seconds(when.timestamp(), now)


def relative_seconds(when: float, now: float | None = None) -> str:
    """Unix time ``when`` as the user reads it: "2 min ago", or the local date and time."""
    now = time.time() if now is None else now
    age = now - when
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
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(when))


def log_line(record: Request, now: float | None = None) -> str:
    """One request as the list shows it: when, what, status, model, tokens, time, key."""
    if isinstance(record, AccessRecord):
        when = relative_time(record.time, now)
        what = f"{record.method} {record.route}"
        tokens_in, tokens_out = record.tokens_in, record.tokens_out
        latency = record.latency_ms
        failure = record.error
    else:  # a stored row (desktop.store is not imported while the window opens)
        when = relative_seconds(record.time, now)
        what = record.route  # the store keeps no method
        tokens_in, tokens_out = record.prompt_tokens, record.completion_tokens
        latency = record.total_ms
        # Stored as a kind: a 2xx with one is a stream that failed after its status.
        failure = record.error_code if record.status < 400 else None
    who = record.key_name or "-"
    model = record.model or "-"
    line = (
        f"{when}  {what}  {record.status}  {model}  "
        + QCoreApplication.translate("RequestList", "%1→%2 tokens")
        .replace("%1", str(tokens_in))
        .replace("%2", str(tokens_out))
        + f"  {latency:.0f} ms  "
        + QCoreApplication.translate("RequestList", "key %1").replace("%1", who)
    )
    # A 200 whose stream then failed: the status alone would read as a success.
    if failure:
        return (
            line
            + "  "
            + QCoreApplication.translate("RequestList", "failed mid-stream: %1").replace(
                "%1", failure
            )
        )
    return line


def matches(record: Request, text: str) -> bool:
    """Whether the filter ``text`` is in the record's key, model, status or error code."""
    needle = text.strip().lower()
    if not needle:
        return True
    fields = (record.key_name, record.model, str(record.status), record.error_code)
    return any(needle in (f or "").lower() for f in fields)


class RequestList(QPlainTextEdit):
    """The last ``LOG_LINES`` requests, newest first (live ones, then those of earlier
    runs), with a filter box (``filter_box``) to put beside it; called on the window's
    thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self._records: deque[Request] = deque(maxlen=LOG_LINES)  # newest first
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText(self.tr("Filter by key, model or status"))
        self.filter_box.setAccessibleName(self.tr("Filter requests"))
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(lambda _text: self.redraw())
        self._timer = QTimer(self)
        self._timer.setInterval(RETIME_MS)
        self._timer.timeout.connect(self.redraw)
        self._timer.start()

    @property
    def records(self) -> list[Request]:
        """The requests kept, newest first."""
        return list(self._records)

    def add(self, record: AccessRecord) -> None:
        """Show one more request on top (if it passes the filter)."""
        self._records.appendleft(record)
        if not matches(record, self.filter_box.text()):
            return
        # One line written at the top, the oldest dropped: not the whole list again for
        # each request of a busy server.
        bar = self.verticalScrollBar()
        at_top = bar.value() == bar.minimum()
        document = self.document()
        cursor = QTextCursor(document)
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        line = log_line(record)
        cursor.insertText(line if document.isEmpty() else line + "\n")
        while document.blockCount() > LOG_LINES:
            last = QTextCursor(document.lastBlock())
            last.select(QTextCursor.SelectionType.BlockUnderCursor)
            last.removeSelectedText()
        if at_top:
            bar.setValue(bar.minimum())

    def add_earlier(self, rows: Iterable[UsageRow]) -> None:
        """Show requests of earlier runs (newest first) under the live ones, as many as
        there is room for."""
        for row in rows:
            if len(self._records) == LOG_LINES:
                break
            self._records.append(row)
        self.redraw()

    def redraw(self) -> None:
        """Write every kept line again: the filter changed, or the times moved on."""
        if not self._records:
            return
        text = self.filter_box.text()
        now = time.time()
        bar = self.verticalScrollBar()
        at_top = bar.value() == bar.minimum()
        kept = bar.value()
        self.setPlainText("\n".join(log_line(r, now) for r in self._records if matches(r, text)))
        bar.setValue(bar.minimum() if at_top else min(kept, bar.maximum()))
