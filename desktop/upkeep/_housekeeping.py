"""Housekeeping: idle models unloaded on their keep-alive clock, hourly maintenance, and
the retention period applied to a store as it opens.

One ``Housekeeping`` per app, built by the composition root and started by whoever keeps
the app alive (the window, or ``edgedesk serve``): before, the window had Qt timers and the
headless server a thread of its own for the same two jobs. It knows nothing of Qt, the
scheduler or the stores: it is given a ``reap`` and a ``maintain`` function.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from desktop.base.audit import Auditor, NoAudit
from desktop.base.errors import EdgeDeskError

log = logging.getLogger("edgedesk.housekeeping")
REAP_INTERVAL_S = 30.0  # how often keep-alive clocks are checked
MAINTAIN_FIRST_S = 10.0  # after start-up work, so the first window is not slowed
MAINTAIN_INTERVAL_S = 3600.0

ReapFn = Callable[[], Sequence[str]]  # unloads idle models, returns their ids
MaintainFn = Callable[[threading.Event], object]  # one pass; stops early when the event is set


class Housekeeping:
    """Runs ``reap`` every ``reap_interval_s`` and ``maintain`` hourly, on one thread.

    ``start()`` and ``stop()`` are called by the thread that owns the app (the window's,
    or ``edgedesk serve``'s main thread); ``reap`` and ``maintain`` run only on the
    housekeeping thread, one at a time, so two passes never overlap. ``tick()`` does what
    is due now: the thread's loop body, which tests drive with a fake ``clock``. A failure
    in either function is logged and the next pass still comes.
    """

    def __init__(
        self,
        reap: ReapFn,
        maintain: MaintainFn | None = None,
        *,
        reap_interval_s: float = REAP_INTERVAL_S,
        maintain_first_s: float = MAINTAIN_FIRST_S,
        maintain_interval_s: float = MAINTAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._reap = reap
        self._maintain = maintain
        self._reap_interval = reap_interval_s
        self._maintain_first = maintain_first_s
        self._maintain_interval = maintain_interval_s
        self._clock = clock
        self._stop = threading.Event()  # also the cancel event of a running maintenance pass
        self._thread: threading.Thread | None = None
        now = clock()
        self._reap_due = now + reap_interval_s
        self._maintain_due = now + maintain_first_s

    @property
    def running(self) -> bool:
        """Whether the housekeeping thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread (no-op when running); the first maintenance comes soon after."""
        if self.running:
            return
        now = self._clock()
        self._reap_due = now + self._reap_interval
        self._maintain_due = now + self._maintain_first
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="edgedesk-housekeeping", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the thread, cancelling a maintenance pass in progress, and join it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self._thread = None

    def tick(self) -> list[str]:
        """Do what is due now (maintenance first, then reaping); returns the models unloaded."""
        now = self._clock()
        if self._maintain is not None and now >= self._maintain_due:
            self._maintain_due = now + self._maintain_interval
            try:
                self._maintain(self._stop)
            except Exception:  # keep the thread alive; the next pass retries
                log.exception("maintenance (retention, document rescan) failed")
        if now < self._reap_due:
            return []
        self._reap_due = now + self._reap_interval
        try:
            unloaded = list(self._reap())
        except Exception:  # a bad unload must not end keep-alive for the others
            log.exception("reaping idle models failed")
            return []
        if unloaded:
            log.info("unloaded idle models: %s", ", ".join(unloaded))
        return unloaded

    def _delay(self) -> float:
        due = self._reap_due if self._maintain is None else min(self._reap_due, self._maintain_due)
        return max(0.0, due - self._clock())

    def _run(self) -> None:
        while not self._stop.wait(self._delay()):
            self.tick()


class Retention(Protocol):
    """A store whose old entries go after a retention period."""

    def apply_retention(self, days: int | None) -> int:
        """Delete what is older than ``days`` (None: keep all); returns how many went."""
        ...


class OpeningStore(Retention, Protocol):
    """A store just opened, which the retention period may still refuse."""

    def close(self) -> None:
        """Close its connection."""
        ...


S = TypeVar("S", bound=OpeningStore)


def retained_at_open(store: S, days: int | None, audit: Auditor, counted: str) -> S:
    """``store`` with the retention period applied (closed if that fails); what went is
    audited as ``counted`` (how many, never which)."""
    try:
        removed = store.apply_retention(days)
    except Exception:
        store.close()
        raise
    if removed:
        # The event the maintenance pass and `edgedesk chats rm` record (no titles).
        audit.record("chats.deleted", **{counted: removed}, reason="retention", retention_days=days)
    return store


class Rescan(Protocol):
    """What maintenance reads of a report of one collection's rescan."""

    @property
    def added(self) -> int:
        """Files added."""
        ...

    @property
    def removed(self) -> int:
        """Files gone from the collection."""
        ...


class Collection(Protocol):
    """A document collection, by name."""

    @property
    def name(self) -> str:
        """The collection's name."""
        ...


class Collections(Protocol):
    """The document library as maintenance sees it."""

    def collections(self) -> Sequence[Collection]:
        """Every collection."""
        ...

    def rescan(self, name: str, *, cancel: threading.Event | None = None) -> Rescan:
        """Pick up added, edited and deleted files of collection ``name``."""
        ...


@dataclass
class MaintenanceReport:
    """What one maintenance pass did: conversations deleted, collections rescanned, failures."""

    conversations_deleted: int = 0
    responses_deleted: int = 0  # stored Responses API responses past the retention period
    rescanned: list[Rescan] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # collection (or "chats") -> why
    usage_pruned: int = 0  # usage rows past usage_retention_days
    usage_rolled_up: int = 0  # single usage rows folded into hourly buckets


class UsageUpkeep(Protocol):
    """The usage store as maintenance sees it."""

    def upkeep(self, retention_days: int, now: float | None = None) -> tuple[int, int]:
        """Prune past ``retention_days``, roll up old rows; (pruned, rolled up)."""
        ...


def maintain(
    chats: Retention,
    responses: Retention,
    library: Collections,
    retention_days: int | None,
    cancel: threading.Event | None = None,
    *,
    audit: Auditor | None = None,
    usage: UsageUpkeep | None = None,
    usage_retention_days: int = 90,
) -> MaintenanceReport:
    """Apply the retention periods (chats, usage), roll usage up, rescan collections (blocking).

    Edits made to indexed files are picked up and old conversations go without a
    restart. A failure in one part (a missing embedding model, a locked file) is
    recorded and the rest goes on; ``cancel`` stops between collections and mid-scan.
    """
    report = MaintenanceReport()
    try:
        report.conversations_deleted = chats.apply_retention(retention_days)
    except EdgeDeskError as exc:
        report.failures["chats"] = exc.message
    try:
        report.responses_deleted = responses.apply_retention(retention_days)
    except EdgeDeskError as exc:
        report.failures["responses"] = exc.message
    if report.conversations_deleted or report.responses_deleted:
        # The event `edgedesk chats rm` records, with how many went and why (no titles).
        (audit or NoAudit()).record(
            "chats.deleted",
            conversations=report.conversations_deleted,
            responses=report.responses_deleted,
            reason="retention",
            retention_days=retention_days,
        )
    if usage is not None:
        try:
            report.usage_pruned, report.usage_rolled_up = usage.upkeep(usage_retention_days)
        except EdgeDeskError as exc:
            report.failures["usage"] = exc.message
    for info in library.collections():
        if cancel is not None and cancel.is_set():
            break
        try:
            report.rescanned.append(library.rescan(info.name, cancel=cancel))
        except EdgeDeskError as exc:
            report.failures[info.name] = exc.message
    return report
