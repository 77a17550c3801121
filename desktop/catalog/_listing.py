"""Rows for showing the catalog: each model with its recommended quant and fit here.

Shared by ``edgedesk models list`` and the window's Models screen so both say the same
thing about the same machine. Pure: the caller passes the hardware and an installed-file
lookup (the catalog may not import the resolver above it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from desktop.catalog._entries import ModelEntry
from desktop.catalog._fit import (
    Hardware,
    Verdict,
    fit_from_size,
    placement_from_size,
    recommend_quant,
)

InstalledFiles = Callable[[str], list[Path] | None]


@dataclass(frozen=True)
class CatalogRow:
    """One model as a list shows it: identity, recommended quant, size, fit, local files."""

    id: str
    name: str
    family: str
    kind: str
    tier: str
    repo: str
    recommended_quant: str | None
    size_bytes: int | None
    fit: str
    installed: tuple[str, ...] | None
    placement: str | None = None  # a mixture of experts: where its experts go (a hint)

    # Any: asdict() for `models list --json`; the dataclass is the shape
    def to_dict(self) -> dict[str, Any]:
        """The row as plain JSON-ready values (``installed`` as a list or None)."""
        data = asdict(self)
        data["installed"] = list(self.installed) if self.installed else None
        return data


def catalog_row(
    entry: ModelEntry, hardware: Hardware, *, gpu_offload: bool, installed: InstalledFiles
) -> CatalogRow:
    """The row for ``entry``: best quant for ``hardware`` and its fit verdict.

    A vision model's projector loads beside it, so its size counts toward the fit.
    """
    extra = entry.mmproj_size or 0
    sizes = {q.name: (q.size or 0) + extra for q in entry.quants}
    recommended = recommend_quant(
        sizes, hardware, gpu_offload=gpu_offload, default=entry.default_quant
    )
    chosen = entry.quant(recommended) if recommended else entry.quant()
    verdict = fit_from_size(
        (chosen.size or 0) + extra, hardware, gpu_offload=gpu_offload, quant=chosen.name
    )
    placement = (
        placement_from_size(
            (chosen.size or 0) + extra,
            hardware,
            gpu_offload=gpu_offload,
            experts_share=entry.experts_share,
        )
        if verdict is not Verdict.NO
        else None
    )
    files = installed(entry.id)
    return CatalogRow(
        id=entry.id,
        name=entry.name,
        family=entry.family,
        kind=entry.kind,
        tier=entry.tier,
        repo=entry.repo,
        recommended_quant=recommended,
        size_bytes=chosen.size,
        fit=str(verdict),
        installed=tuple(str(f) for f in files) if files else None,
        placement=placement,
    )


def catalog_rows(
    entries: Iterable[ModelEntry],
    hardware: Hardware,
    *,
    gpu_offload: bool,
    installed: InstalledFiles,
) -> list[CatalogRow]:
    """One row per catalog entry, in catalog order."""
    return [catalog_row(e, hardware, gpu_offload=gpu_offload, installed=installed) for e in entries]
