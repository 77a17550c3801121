"""Which models exist, what they need, and how they fit this machine.

The face: ``__all__`` is the catalog's contract, and code outside ``desktop.catalog``
imports only these names (an import-linter contract in pyproject.toml). The insides,
whose names start with ``_``, are free to change: ``_entries`` (``models.toml``),
``_gguf_info`` (a GGUF's header), ``_fit`` (this machine and what fits it), ``_hub``,
``_download``, ``_pull``, ``_installed``, ``_bundle``, ``_listing``. A name is imported
from its inside module on first use, so importing the face loads nothing heavy (httpx,
pydantic, cryptography, psutil).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.catalog._bundle import import_bundle, write_bundle
    from desktop.catalog._cancel import CancelEvent
    from desktop.catalog._download import Downloader, Progress
    from desktop.catalog._entries import Catalog, ModelEntry, load_catalog
    from desktop.catalog._fit import (
        GPU,
        Fit,
        Hardware,
        Verdict,
        detect_hardware,
        fit_model,
        with_memory,
    )
    from desktop.catalog._gguf_info import GGUFInfo, read_gguf
    from desktop.catalog._hub import HubClient, delete_token, quant_of, resolve_endpoint, save_token
    from desktop.catalog._installed import (
        InstalledIndex,
        InstalledModel,
        discover_hf_cache,
        hf_home,
        model_id_for,
    )
    from desktop.catalog._listing import CatalogRow, catalog_rows
    from desktop.catalog._pull import (
        PullTarget,
        discard_partial,
        parse_target,
        partial_files,
        pull,
        unfinished_pulls,
    )

__all__ = [
    "GPU",
    "CancelEvent",
    "Catalog",
    "CatalogRow",
    "Downloader",
    "Fit",
    "GGUFInfo",
    "Hardware",
    "HubClient",
    "InstalledIndex",
    "InstalledModel",
    "ModelEntry",
    "Progress",
    "PullTarget",
    "Verdict",
    "catalog_rows",
    "delete_token",
    "detect_hardware",
    "discard_partial",
    "discover_hf_cache",
    "fit_model",
    "hf_home",
    "import_bundle",
    "load_catalog",
    "model_id_for",
    "parse_target",
    "partial_files",
    "pull",
    "quant_of",
    "read_gguf",
    "resolve_endpoint",
    "save_token",
    "unfinished_pulls",
    "with_memory",
    "write_bundle",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "import_bundle": "_bundle",
    "write_bundle": "_bundle",
    "CancelEvent": "_cancel",
    "Downloader": "_download",
    "Progress": "_download",
    "Catalog": "_entries",
    "ModelEntry": "_entries",
    "load_catalog": "_entries",
    "Fit": "_fit",
    "GPU": "_fit",
    "Hardware": "_fit",
    "Verdict": "_fit",
    "detect_hardware": "_fit",
    "fit_model": "_fit",
    "with_memory": "_fit",
    "GGUFInfo": "_gguf_info",
    "read_gguf": "_gguf_info",
    "HubClient": "_hub",
    "delete_token": "_hub",
    "quant_of": "_hub",
    "resolve_endpoint": "_hub",
    "save_token": "_hub",
    "InstalledIndex": "_installed",
    "InstalledModel": "_installed",
    "discover_hf_cache": "_installed",
    "hf_home": "_installed",
    "model_id_for": "_installed",
    "CatalogRow": "_listing",
    "catalog_rows": "_listing",
    "PullTarget": "_pull",
    "discard_partial": "_pull",
    "parse_target": "_pull",
    "partial_files": "_pull",
    "pull": "_pull",
    "unfinished_pulls": "_pull",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
