"""What the window's model details show: header, catalog entry, files with SHA-256, fit.

Blocks: reads the GGUF header and hashes each file whose digest the caller does not
already know (seconds for a large model); the window calls it on a worker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.base.errors import TemplateMissing
from desktop.catalog import Fit, GGUFInfo, ModelEntry
from desktop.engine import resolve_template
from desktop.resolve._locate import Located, looks_like_path, stable_id


@dataclass(frozen=True)
class ModelFile:
    """One file of a model: where it is, its size and its SHA-256."""

    path: Path
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelDetails:
    """What the window's model details show: the header, the catalog, the files, the fit."""

    id: str
    info: GGUFInfo  # architecture, parameters, quant (file type), trained context, template
    entry: ModelEntry | None  # the catalog's: name, licence, template override
    files: tuple[ModelFile, ...]
    fit: Fit  # the load plan on this machine: context, layers on the GPU, memory
    # The template chats are formatted with, chosen as the engine chooses it (the GGUF's,
    # the catalog's, one built in for the architecture), and where it came from ("gguf",
    # "catalog", "architecture:NAME"); None and "" for a model that cannot chat.
    chat_template: str | None = None
    template_source: str = ""
    projector: ModelFile | None = None  # a vision model's mmproj file; None: text only

    @property
    def kv_cache_bytes(self) -> int:
        """The KV cache's memory at the planned context, cache type and slots, laid out
        as the engine allocates it (sliding-window layers at window size or full)."""
        fit = self.fit
        return self.info.kv_bytes(fit.context_length, fit.cache_type, fit.parallel, fit.swa_full)


def model_details(
    ref: str,
    located: Located,
    info: GGUFInfo,
    fit: Fit,
    *,
    digest: Callable[[Path], str],
    projector: Path | None = None,
    known: Mapping[str, str] | None = None,
) -> ModelDetails:
    """The details of ``ref`` (found at ``located``, loading with ``projector`` if a vision
    model); ``known`` maps path -> SHA-256 for files already hashed (installed.json), the
    others go through ``digest``."""
    path, entry, files = located
    digests = known or {}

    def described(f: Path) -> ModelFile:
        return ModelFile(f, f.stat().st_size, digests.get(str(f)) or digest(f))

    listed = tuple(described(f) for f in files)
    shown = entry.id if entry else stable_id(path) if looks_like_path(ref) else ref
    try:
        template = resolve_template(
            model_name=shown,
            architecture=info.architecture,
            gguf_template=info.chat_template,
            catalog_template=entry.chat_template if entry else None,
        )
    except TemplateMissing:
        template = None
    return ModelDetails(
        shown,
        info,
        entry,
        listed,
        fit,
        template.text if template else None,
        template.source if template else "",
        described(projector) if projector is not None else None,
    )
