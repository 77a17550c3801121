"""The audit log the settings ask for, and what it notes beyond the stores' own events.

IT reads the log to see when the policy forced on a machine changed: each start compares
the forced settings with the ones noted last time (``policy.seen.json`` beside the log).
It also sees each call to a remote engine (host, sizes; never content), as the network
gate reports it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from desktop.base.audit import AuditLog, Auditor, KeyringAnchor, NoAudit
from desktop.base.config import EffectiveSettings, expand_path, flatten
from desktop.base.net import Connection

SEEN_FILE = "policy.seen.json"
REMOTE_ENGINE = "remote engine"  # desktop.remote._engine.PURPOSE (importing it pulls httpx)


def open_audit(
    effective: EffectiveSettings, default_folder: Path, problem: str | None = None
) -> Auditor:
    """The audit log (``NoAudit`` when off), with ``policy.changed`` recorded when the forced
    settings differ from the last start's (``problem``: why the policy is invalid)."""
    settings = effective.settings
    if not settings.audit_log:
        return NoAudit()
    folder = expand_path(settings.audit_log_path) if settings.audit_log_path else default_folder
    # The head is anchored in the OS keyring: outside the folder (which IT may put
    # anywhere), per user, and at hand to every process that records, the database
    # locked, mid-conversion or not unlocked included (docs/privacy.md, "The audit log").
    log = AuditLog(folder, anchor=KeyringAnchor(folder))
    forced = {k: v for k, v in flatten(settings.model_dump()).items() if effective.is_locked(k)}
    seen = json.dumps(forced, sort_keys=True, default=str)
    marker = folder / SEEN_FILE
    try:
        before = marker.read_text(encoding="utf-8")
    except OSError:
        before = None
    if before != seen and (before is not None or forced):  # a first start, no policy: quiet
        log.record("policy.changed", settings=sorted(forced), values=forced, problem=problem)
        with contextlib.suppress(OSError):
            marker.write_text(seen, encoding="utf-8")
    return log


def remote_call_observer(audit: Auditor) -> Callable[[Connection], None] | None:
    """The network gate's observer recording each remote-engine call as ``remote.call``
    (None when the audit log is off: nothing to observe)."""
    if not isinstance(audit, AuditLog):
        return None

    def observe(c: Connection) -> None:
        if c.purpose == REMOTE_ENGINE:
            audit.record(
                "remote.call",
                host=c.host,
                method=c.method,
                path=c.path[:200],
                allowed=c.allowed,
                error=c.reason or None,
                bytes_sent=c.bytes_sent,
                bytes_received=c.bytes_received,
            )

    return observe
