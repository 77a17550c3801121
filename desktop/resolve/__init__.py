"""Model name -> load plan: locate the files, check the machine policy, fit a plan.

The face: ``__all__`` is the resolver's contract, and code outside ``desktop.resolve``
imports only these names (an import-linter contract in pyproject.toml). The insides,
whose names start with ``_``, are free to change: ``_locate`` (a name to files),
``_allowed`` (the AllowedModels policy), ``_headers`` (GGUF headers, cached), ``_plan``
(fitting), ``_details``; ``_resolver.ModelResolver`` joins them. A name is imported from
its inside module on first use, so importing the face loads nothing heavy (the chat
templates' jinja2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.resolve._details import ModelDetails
    from desktop.resolve._locate import looks_like_path
    from desktop.resolve._resolver import ModelResolver

__all__ = [
    "ModelDetails",
    "ModelResolver",
    "looks_like_path",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "ModelDetails": "_details",
    "looks_like_path": "_locate",
    "ModelResolver": "_resolver",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
