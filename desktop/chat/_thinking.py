"""Whether a model reasons before answering, so a view offers the Think switch for it.

The window's Think checkbox and ``edgedesk chat``'s ``/think`` switch a chat's thinking
off through the chat template (``enable_thinking``); that only means something for a
model that thinks first.
"""

from __future__ import annotations

from desktop.base.errors import EdgeDeskError
from desktop.catalog import Catalog
from desktop.resolve import ModelResolver


def model_thinks(catalog: Catalog, resolver: ModelResolver, ref: str) -> bool:
    """Whether model ``ref`` reasons before answering (catalog, else its own template)."""
    entry = catalog.find(ref)
    if entry is not None:
        return entry.reasoning == "think"
    try:
        path = resolver(ref).path
        if path is None:
            return False  # a remote model: no switch to offer
        template = resolver.info(path).chat_template or ""
    except EdgeDeskError:
        return False  # a remote model, or one that cannot be read: no switch to offer
    return "enable_thinking" in template or "<think>" in template
