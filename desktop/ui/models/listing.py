"""What the Models screen lists, read from disk on a worker thread.

Building the rows reads installed files, GGUF headers of models pulled by repo and
file, the partial downloads on disk and the machine's memory (the first probe imports
llama.cpp): too slow for the window's thread with many models. ``list_models`` is the
blocking part; the screen applies its ``Listing`` on the window's thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from desktop.base.errors import EdgeDeskError, InvalidRequest, ModelNotFound
from desktop.catalog import CatalogRow, Hardware, catalog_rows, read_gguf, unfinished_pulls

if TYPE_CHECKING:
    from desktop.base.config import Paths
    from desktop.catalog import Catalog, InstalledIndex
    from desktop.remote import RemoteRegistry
    from desktop.resolve import ModelResolver


class ModelFacts(Protocol):
    """What listing and importing models read (the context's members of the same names)."""

    @property
    def paths(self) -> Paths:
        """Where models are (partial downloads)."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog."""

    @property
    def installed(self) -> InstalledIndex:
        """Downloaded and imported models."""

    @property
    def resolver(self) -> ModelResolver:
        """Model reference -> fitted load plan."""

    @property
    def hardware(self) -> Hardware:
        """This machine (probed on first use)."""

    @property
    def gpu_offload(self) -> bool:
        """Whether this llama.cpp build offloads to a GPU."""


@dataclass(frozen=True)
class Listing:
    """Rows read from disk (models pulled by repo and file, then the catalog), the
    ``REPO:FILE`` downloads left partial on disk, and the machine they were fitted to."""

    rows: tuple[CatalogRow, ...] = ()
    unfinished: tuple[str, ...] = ()
    hardware: Hardware | None = None


Lister = Callable[[], Listing]


def installed_files(context: ModelFacts, model_id: str) -> list[Path] | None:
    """The files of ``model_id`` when it is on disk, else None (any thread)."""
    try:
        _, _, files = context.resolver.locate(model_id)
    except ModelNotFound:
        return None
    return files


def downloaded_elsewhere(context: ModelFacts) -> list[CatalogRow]:
    """Rows for models pulled from the Hub by repo and file, and for imported files
    (not catalog entries)."""
    rows = []
    for model in context.installed.all():
        if model.catalog_id is not None or not model.paths:
            continue
        try:
            spec = context.resolver(model.id)  # reads the GGUF header
            info = context.resolver.info(spec.file)
            fit = str(context.resolver.fit(info).verdict)
        except EdgeDeskError:
            continue  # files gone or unreadable: 'edgedesk models list' explains
        rows.append(
            CatalogRow(
                id=model.id,
                name=model.id,  # as everywhere: the name it is used by, no ".gguf"
                family="other",
                kind=spec.kind,
                tier="hub" if model.source == "hub" else "local",
                repo=model.repo or str(model.paths[0].parent),
                recommended_quant=model.quant or info.file_type,
                size_bytes=model.size,
                fit=fit,
                installed=model.files,
            )
        )
    return rows


def list_models(context: ModelFacts) -> Listing:
    """Everything the Models screen reads from disk (blocking: call it on a worker)."""
    hardware = context.hardware
    rows = catalog_rows(
        context.catalog,
        hardware,
        gpu_offload=context.gpu_offload,
        installed=lambda ref: installed_files(context, ref),
    )
    unfinished = unfinished_pulls(context.paths.models_dir, context.catalog)
    return Listing((*downloaded_elsewhere(context), *rows), tuple(unfinished), hardware)


def remote_rows(listed: object, remotes: RemoteRegistry, badge: str) -> list[CatalogRow]:
    """Rows for the models each remote listed (the context's ``remote_models``), badged with
    ``badge`` ("runs on {0} — leaves this device", translated by the caller)."""
    rows = []
    for name, ids in dict(listed).items():  # type: ignore[call-overload]
        if not isinstance(ids, list):
            continue  # unreachable now; 'edgedesk remotes test NAME' says why
        endpoint = remotes.get(name)
        for model_id in ids:
            rows.append(
                CatalogRow(
                    id=model_id,
                    name=remote_label(badge, model_id, name),
                    family="remote",
                    kind="chat",
                    tier="remote",
                    repo=endpoint.base_url if endpoint else name,
                    recommended_quant=None,
                    size_bytes=None,
                    fit="—",
                    installed=("remote",),
                )
            )
    return rows


def remote_label(template: str, model_id: str, remote: str) -> str:
    """A remote model's name with its badge: ``glm-4.6 (runs on gpu — leaves this device)``."""
    return f"{model_id.removeprefix(remote + '/')} ({template.format(remote)})"


def model_and_projector(paths: list[Path]) -> tuple[Path, Path | None]:
    """Of the GGUF files chosen to import together, the model and its vision projector
    (None: a text model); InvalidRequest unless there is one model and at most one
    projector (blocking: reads each header)."""
    projectors = [p for p in paths if read_gguf(p).architecture == "clip"]
    models = [p for p in paths if p not in projectors]
    if len(models) != 1 or len(projectors) > 1:
        raise InvalidRequest(
            "choose one model file, and for a vision model its mmproj-….gguf projector with it"
        )
    return models[0], projectors[0] if projectors else None


def imported_row(context: ModelFacts, path: Path, projector: Path | None = None) -> CatalogRow:
    """Import the GGUF at ``path`` (with its vision ``projector``) where it lies (no copy)
    into the installed index, as ``edgedesk models import [--mmproj]`` does, so it is still
    there at the next start; its row, fitted (blocking: the files are hashed)."""
    resolver = context.resolver
    model_id = context.installed.import_file(path, projector=projector).id
    spec = resolver(model_id)
    info = resolver.info(spec.file)
    plan = resolver.fit(info, projector=spec.local.projector if spec.local else None)
    return CatalogRow(
        id=model_id,
        name=model_id,  # as everywhere: the name it is used by, no ".gguf"
        family="other",
        kind=spec.kind,
        tier="local",
        repo=str(spec.file.parent),
        recommended_quant=info.file_type,
        size_bytes=spec.file.stat().st_size,
        fit=str(plan.verdict),
        installed=(str(spec.file),),
    )
