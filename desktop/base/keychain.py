"""One secret per name in the OS keyring: read, store, forget — never a file of ours.

The Hub token, remote engines' API keys and MCP servers' bearer tokens all live here,
each under its own keyring service name. A machine with no usable keyring reads as
"nothing stored" and refuses to store (saying why), so a secret never falls back to disk.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop.base.errors import ConfigError


@dataclass(frozen=True)
class Keychain:
    """The secrets of one kind (``service``), each kept under a name; any thread.

    ``what`` names the secret in the refusal message, e.g. "API key".
    """

    service: str
    what: str

    def get(self, name: str) -> str | None:
        """The secret stored under ``name``; None if none, or no usable keyring."""
        import keyring
        from keyring.errors import KeyringError

        try:
            value: str | None = keyring.get_password(self.service, name)
        except KeyringError:
            return None
        return value

    def set(self, name: str, secret: str, *, why_needed: str = "") -> None:
        """Store ``secret`` under ``name``; ConfigError if there is no usable keyring."""
        import keyring
        from keyring.errors import KeyringError

        try:
            keyring.set_password(self.service, name, secret)
        except KeyringError as exc:
            raise ConfigError(
                f"no usable OS keyring to store the {self.what} in ({exc}); "
                f"the {self.what} is never written to a file"
                + (f", so {why_needed}" if why_needed else "")
            ) from None

    def delete(self, name: str) -> bool:
        """Forget the secret under ``name``; False if none was stored (or no keyring)."""
        import keyring
        from keyring.errors import KeyringError, PasswordDeleteError

        try:
            keyring.delete_password(self.service, name)
        except (PasswordDeleteError, KeyringError):
            return False
        return True
