"""Read the machine policy from the OS's managed location; invalid policy fails closed.

- Linux: ``/etc/edgedesk/policy.json`` (fixed path; tests pass another ``root``).
- Windows: ``HKLM\\Software\\Policies\\EdgeDesk`` (written by GPO / ADMX or the MSI).
- macOS: forced managed preferences ``/Library/Managed Preferences/<bundle id>.plist``.

Nothing here reads an environment variable or a user file: a user cannot point
EdgeDesk at a looser policy.
"""

from __future__ import annotations

import json
import logging
import plistlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.base.errors import ConfigError
from desktop.policy._schema import KEYS, fail_closed_settings, parse_policy, to_settings

LINUX_POLICY_FILE = Path("/etc/edgedesk/policy.json")
MACOS_BUNDLE_ID = "org.edgedesk.EdgeDesk"
MACOS_POLICY_FILE = Path("/Library/Managed Preferences") / f"{MACOS_BUNDLE_ID}.plist"
WINDOWS_POLICY_KEY = r"Software\Policies\EdgeDesk"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MachinePolicy:
    """The policy in force: what it forces, where it came from, and any problem."""

    origin: str | None = None
    # checked policy values by key (parse_policy); only passed on to to_settings
    values: dict[str, object] = field(default_factory=dict)
    problem: str | None = None

    def forced(self) -> Mapping[str, Any]:
        """Dotted settings to force; the most restrictive set if the policy is invalid."""
        if self.problem is not None:
            return fail_closed_settings()
        return to_settings(self.values)

    @property
    def active(self) -> bool:
        """Whether any policy (valid or not) is present on this machine."""
        return self.origin is not None


# the raw document, checked by parse_policy
def _read_linux(root: Path) -> tuple[str, dict[str, object]] | None:
    path = root / LINUX_POLICY_FILE.relative_to("/")
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Invalid(str(path), f"cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _Invalid(str(path), "must hold a JSON object of policy keys")
    return str(path), data


# the raw plist, checked by parse_policy
def _read_macos(root: Path) -> tuple[str, dict[str, object]] | None:
    path = root / MACOS_POLICY_FILE.relative_to("/")
    if not path.exists():
        return None
    try:
        data = plistlib.loads(path.read_bytes())
    except (OSError, plistlib.InvalidFileException, ValueError) as exc:
        raise _Invalid(str(path), f"is not a readable property list ({exc})") from None
    if not isinstance(data, dict):
        raise _Invalid(str(path), "must hold a dictionary of policy keys")
    return str(path), {k: v for k, v in data.items() if not k.startswith("Payload")}


# raw registry values, checked by parse_policy
def _read_windows() -> tuple[str, dict[str, object]] | None:  # pragma: no cover - Windows only
    if sys.platform != "win32":  # also tells mypy to check this on Windows only
        return None
    import winreg

    origin = "HKLM\\" + WINDOWS_POLICY_KEY
    try:
        handle = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, WINDOWS_POLICY_KEY)
    except OSError:
        return None
    values: dict[str, object] = {}
    with handle:
        index = 0
        while True:
            try:
                name, value, _kind = winreg.EnumValue(handle, index)
            except OSError:
                break
            values[name] = value
            index += 1
    # ADMX <list> elements store each entry as a value of a subkey named after the policy.
    for key in KEYS:
        if key.type != "list":
            continue
        try:
            sub = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, f"{WINDOWS_POLICY_KEY}\\{key.name}")
        except OSError:
            continue
        entries: list[str] = []
        with sub:
            index = 0
            while True:
                try:
                    entries.append(str(winreg.EnumValue(sub, index)[1]))
                except OSError:
                    break
                index += 1
        values[key.name] = entries
    return origin, values


class _Invalid(Exception):
    def __init__(self, origin: str, reason: str) -> None:
        super().__init__(reason)
        self.origin = origin
        self.reason = reason


def load_machine_policy(root: Path = Path("/"), platform: str = sys.platform) -> MachinePolicy:
    """Read this OS's policy; a broken one yields a fail-closed policy with its reason."""
    try:
        if platform.startswith("win"):
            found = _read_windows()
        elif platform == "darwin":
            found = _read_macos(root)
        else:
            found = _read_linux(root)
        if found is None:
            return MachinePolicy()
        origin, raw = found
        try:
            return MachinePolicy(origin, parse_policy(raw))
        except ConfigError as exc:
            raise _Invalid(origin, exc.message) from None
    except _Invalid as bad:
        problem = (
            f"the machine policy at {bad.origin} is invalid: {bad.reason}; "
            "EdgeDesk runs locked down (offline, no downloads, no server) until IT "
            "fixes it"
        )
        log.error(problem)
        return MachinePolicy(bad.origin, {}, problem)
