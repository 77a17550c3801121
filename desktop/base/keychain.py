"""One secret per name in the OS keyring: read, store, forget — never a file of ours.

The Hub token, remote engines' API keys, MCP servers' bearer tokens, the database key
and the audit log's head all live here, each under its own keyring service name. A
machine with no usable keyring reads as "nothing stored" and refuses to store (saying
why), so a secret never falls back to disk. A keyring backend that cannot even load
(``PYTHON_KEYRING_BACKEND`` naming a module that is not installed, a backend that fails
to start) is the same as none: every command carries on as on a machine without one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.base.errors import ConfigError

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

log = logging.getLogger(__name__)
_PROBE = "edgedesk-probe"  # a name never stored: reading it says whether the keyring works


def backend() -> KeyringBackend | None:
    """The OS keyring's backend, or None when none can be loaded (then: no keyring)."""
    import keyring

    try:
        return keyring.get_keyring()
    except Exception as exc:
        log.warning(
            "the OS keyring cannot be used (%s: %s); carrying on without one",
            type(exc).__name__,
            exc,
        )
        return None


def ring_errors() -> tuple[type[BaseException], ...]:
    """What a keyring call raises when it cannot serve (none usable, locked, refused)."""
    from keyring.errors import KeyringError

    return (KeyringError, RuntimeError)


@dataclass(frozen=True)
class Keychain:
    """The secrets of one kind (``service``), each kept under a name; any thread.

    ``what`` names the secret in the refusal message, e.g. "API key".
    """

    service: str
    what: str

    def get(self, name: str) -> str | None:
        """The secret stored under ``name``; None if none, or no usable keyring."""
        ring = backend()
        if ring is None:
            return None
        try:
            value: str | None = ring.get_password(self.service, name)
        except ring_errors():
            return None
        return value

    def usable(self) -> bool:
        """Whether a keyring answers here (a read works, whatever it finds)."""
        ring = backend()
        if ring is None:
            return False
        try:
            ring.get_password(self.service, _PROBE)
        except ring_errors():
            return False
        return True

    def set(self, name: str, secret: str, *, why_needed: str = "") -> None:
        """Store ``secret`` under ``name``; ConfigError if there is no usable keyring."""
        ring = backend()
        try:
            if ring is None:
                raise RuntimeError("no keyring backend could be loaded")
            ring.set_password(self.service, name, secret)
        except ring_errors() as exc:
            raise ConfigError(
                f"no usable OS keyring to store the {self.what} in ({exc}); "
                f"the {self.what} is never written to a file"
                + (f", so {why_needed}" if why_needed else "")
            ) from None

    def delete(self, name: str) -> bool:
        """Forget the secret under ``name``; False if none was stored (or no keyring)."""
        ring = backend()
        if ring is None:
            return False
        try:
            ring.delete_password(self.service, name)
        except ring_errors():  # PasswordDeleteError is a KeyringError
            return False
        return True
