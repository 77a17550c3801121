"""The machine-wide policy IT sets and users cannot override (schema, OS sources)."""

from desktop.policy.schema import KEYS, PolicyKey, fail_closed_settings, parse_policy
from desktop.policy.sources import MachinePolicy, load_machine_policy

__all__ = [
    "KEYS",
    "MachinePolicy",
    "PolicyKey",
    "fail_closed_settings",
    "load_machine_policy",
    "parse_policy",
]
