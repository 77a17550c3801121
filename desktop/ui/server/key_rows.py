"""The Server screen's API key rows in the window's words: when a key was made and last
used as "2 min ago" (the exact local time on hover), and its scope, translated.

Window's thread only (Qt translators).
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QCoreApplication

from desktop.server import KeyInfo, KeyScope

MINUTE, HOUR, DAY = 60, 3600, 86400


def seconds_of(iso: str | None) -> float | None:
    """The Unix time of an ISO timestamp as the key store writes it (None: not a time)."""
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def exact_time(when: float) -> str:
    """``when`` as this computer's local date and time, to the minute."""
    return datetime.fromtimestamp(when).astimezone().strftime("%Y-%m-%d %H:%M")


def time_ago(when: float, now: float) -> str:
    """How long before ``now`` ``when`` was: "just now", "5 min ago", "3 h ago",
    "yesterday", "4 days ago", then the local date."""
    gone = now - when
    if gone < MINUTE:
        return QCoreApplication.translate("KeyRows", "just now")
    if gone < HOUR:
        return QCoreApplication.translate("KeyRows", "%1 min ago").replace(
            "%1", str(int(gone // MINUTE))
        )
    if gone < DAY:
        return QCoreApplication.translate("KeyRows", "%1 h ago").replace(
            "%1", str(int(gone // HOUR))
        )
    if gone < 2 * DAY:
        return QCoreApplication.translate("KeyRows", "yesterday")
    if gone < 7 * DAY:
        return QCoreApplication.translate("KeyRows", "%1 days ago").replace(
            "%1", str(int(gone // DAY))
        )
    return datetime.fromtimestamp(when).astimezone().strftime("%Y-%m-%d")


def scope_text(scope: KeyScope) -> str:
    """What the key may do, in a few translated words."""
    parts = []
    if scope.endpoints is not None:
        parts.append(
            QCoreApplication.translate("KeyRows", "endpoints: %1").replace(
                "%1", ", ".join(scope.endpoints)
            )
        )
    if scope.models is not None:
        parts.append(
            QCoreApplication.translate("KeyRows", "models: %1").replace(
                "%1", ", ".join(scope.models)
            )
        )
    if scope.read_only_docs:
        parts.append(
            QCoreApplication.translate("KeyRows", "reads documents of %1").replace(
                "%1", scope.read_only_docs
            )
        )
    if scope.rate_per_min is not None:
        parts.append(
            QCoreApplication.translate("KeyRows", "%1 requests a minute").replace(
                "%1", str(scope.rate_per_min)
            )
        )
    if scope.expires is not None:
        parts.append(
            QCoreApplication.translate("KeyRows", "expires %1").replace(
                "%1", exact_time(scope.expires)
            )
        )
    return "; ".join(parts) or QCoreApplication.translate("KeyRows", "any model, any endpoint")


def key_row(info: KeyInfo, now: float) -> tuple[str, str]:
    """A key's row (its name and hint, then when it was made and used, and its scope) and
    its tooltip (the exact local times)."""
    made = seconds_of(info.created)
    used = seconds_of(info.last_used)
    made_text = QCoreApplication.translate("KeyRows", "made %1").replace(
        "%1", time_ago(made, now) if made else "?"
    )
    used_text = (
        QCoreApplication.translate("KeyRows", "last used %1").replace("%1", time_ago(used, now))
        if used is not None
        else QCoreApplication.translate("KeyRows", "never used")
    )
    text = f"{info.name}  (…{info.hint})\n{made_text} · {used_text} · {scope_text(info.scope)}"
    tip = [
        QCoreApplication.translate("KeyRows", "Made: %1").replace(
            "%1", exact_time(made) if made else "?"
        )
    ]
    tip.append(
        QCoreApplication.translate("KeyRows", "Last used: %1").replace("%1", exact_time(used))
        if used is not None
        else used_text
    )
    return text, "\n".join(tip)
