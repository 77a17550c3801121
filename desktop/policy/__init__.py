"""The machine-wide policy IT sets and users cannot override (schema, OS sources).

The face: ``__all__`` is the policy's contract, and code outside ``desktop.policy``
imports only these names (an import-linter contract in pyproject.toml; the IT templates'
generator in ``packaging/policy`` uses the schema and the OS locations too). The insides,
whose names start with ``_``, are free to change: ``_schema`` (every key), ``_sources``
(reading it from the OS), ``_audited`` (the audit log opened under it). A name is
imported from its inside module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.policy._audited import open_audit, remote_call_observer
    from desktop.policy._schema import KEYS, PolicyKey
    from desktop.policy._sources import (
        MACOS_BUNDLE_ID,
        WINDOWS_POLICY_KEY,
        MachinePolicy,
        load_machine_policy,
    )

__all__ = [
    "KEYS",
    "MACOS_BUNDLE_ID",
    "WINDOWS_POLICY_KEY",
    "MachinePolicy",
    "PolicyKey",
    "load_machine_policy",
    "open_audit",
    "remote_call_observer",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "open_audit": "_audited",
    "remote_call_observer": "_audited",
    "KEYS": "_schema",
    "PolicyKey": "_schema",
    "MACOS_BUNDLE_ID": "_sources",
    "MachinePolicy": "_sources",
    "WINDOWS_POLICY_KEY": "_sources",
    "load_machine_policy": "_sources",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
