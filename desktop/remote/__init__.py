"""Remote engines: an organization's OpenAI-compatible servers used as models here.

The face: ``__all__`` is its contract, and code outside ``desktop.remote`` imports only
these names (an import-linter contract in pyproject.toml). The insides, whose names start
with ``_``, are free to change: ``_registry`` (the endpoints and their keys), ``_engine``
(one remote model as an ``Engine``), ``_translate`` (the wire), ``_models`` (the listing).
A name is imported from its inside module on first use, so importing the face loads
nothing heavy (httpx).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.remote._engine import list_models
    from desktop.remote._models import RemoteModels
    from desktop.remote._registry import RemoteRegistry, keyring_delete, keyring_set

__all__ = [
    "RemoteModels",
    "RemoteRegistry",
    "keyring_delete",
    "keyring_set",
    "list_models",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "list_models": "_engine",
    "RemoteModels": "_models",
    "RemoteRegistry": "_registry",
    "keyring_delete": "_registry",
    "keyring_set": "_registry",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
