"""The audit log the settings ask for, noting a machine-policy change since it last looked.

IT reads the log to see when the policy forced on a machine changed: each start compares
the forced settings with the ones noted last time (``policy.seen.json`` beside the log).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from desktop.audit import AuditLog, Auditor, NoAudit
from desktop.config import EffectiveSettings, expand_path, flatten

SEEN_FILE = "policy.seen.json"


def open_audit(
    effective: EffectiveSettings, default_folder: Path, problem: str | None = None
) -> Auditor:
    """The audit log (``NoAudit`` when off), with ``policy.changed`` recorded when the forced
    settings differ from the last start's (``problem``: why the policy is invalid)."""
    settings = effective.settings
    if not settings.audit_log:
        return NoAudit()
    folder = expand_path(settings.audit_log_path) if settings.audit_log_path else default_folder
    log = AuditLog(folder)
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
