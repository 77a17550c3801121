"""What a chat's model can take: pictures (a vision projector) and how long a prompt.

A local model sees pictures when its load plan has a projector (``LocalPlan.projector``);
a remote model's server decides for itself. Both answers read the model's header through
the resolver (blocks briefly).
"""

from __future__ import annotations

from desktop.errors import EdgeDeskError
from desktop.resolve import ModelResolver


def model_sees(resolver: ModelResolver, ref: str) -> bool:
    """Whether model ``ref`` takes pictures (a model that cannot be resolved is left to
    fail with its own message when it is used, so it counts as seeing here)."""
    try:
        spec = resolver(ref)
    except EdgeDeskError:
        return True
    local = spec.local
    return local is None or local.projector is not None


def model_context(resolver: ModelResolver, ref: str) -> int | None:
    """The context model ``ref`` is loaded with, in tokens (None: not known)."""
    try:
        length = resolver(ref).context_length
    except EdgeDeskError:
        return None
    return length if length and length > 0 else None
