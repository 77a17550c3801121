"""Model name -> load plan: locate the files, check the machine policy, fit a plan."""

from desktop.resolve.details import ModelDetails, ModelFile
from desktop.resolve.locate import (
    InstalledLookup,
    default_files,
    installed_from_mapping,
    looks_like_path,
    stable_id,
)
from desktop.resolve.plan import MAX_CONTEXT, effective_parallel
from desktop.resolve.resolver import ModelResolver

__all__ = [
    "MAX_CONTEXT",
    "InstalledLookup",
    "ModelDetails",
    "ModelFile",
    "ModelResolver",
    "default_files",
    "effective_parallel",
    "installed_from_mapping",
    "looks_like_path",
    "stable_id",
]
