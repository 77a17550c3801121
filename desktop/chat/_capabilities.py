"""What a chat's model can take: pictures (a vision projector) and how long a prompt.

The one rule for pictures (``takes_pictures``), used by the window, the CLI and the
server alike: a local model takes them when its load plan has a projector
(``LocalPlan.projector``); a remote model (``NAME/MODEL``) gets them passed on, as
``image_url`` data-URL parts (``remote/_translate.py``), and its server decides (it answers
with its own error when it cannot see). Listings claim "vision" only for what is known
to see (``known_to_see``: a local model with a projector). The answers read the
model's header through the resolver (blocks briefly).
"""

from __future__ import annotations

from desktop.base.errors import EdgeDeskError
from desktop.engine import ModelSpec
from desktop.resolve import ModelResolver


def takes_pictures(spec: ModelSpec) -> bool:
    """Whether pictures may be sent to the model ``spec`` plans: a local one with a
    vision projector, or a remote one (its server decides)."""
    local = spec.local
    return local is None or local.projector is not None


def known_to_see(spec: ModelSpec) -> bool:
    """Whether the model is known to see pictures: a local one with a vision projector
    (a remote's abilities are not known here)."""
    return spec.local is not None and spec.local.projector is not None


def model_sees(resolver: ModelResolver, ref: str) -> bool:
    """Whether model ``ref`` takes pictures (``takes_pictures``; a model that cannot be
    resolved is left to fail with its own message when it is used, so it counts as
    seeing here)."""
    try:
        spec = resolver(ref)
    except EdgeDeskError:
        return True
    return takes_pictures(spec)


def model_context(resolver: ModelResolver, ref: str) -> int | None:
    """The context model ``ref`` is loaded with, in tokens (None: not known)."""
    try:
        length = resolver(ref).context_length
    except EdgeDeskError:
        return None
    return length if length and length > 0 else None
