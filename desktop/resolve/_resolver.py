"""Turn what a user types (a catalog id, an installed model, a .gguf path) into a load plan.

``ModelResolver`` holds what the plan depends on (catalog, paths, settings, hardware,
policy) and runs the three steps, each its own module: ``_locate`` (which files),
``_allowed`` (does the machine policy let it run) and ``_plan`` (fit the header to this
machine); ``_headers`` caches the GGUF headers they read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from desktop.base.config import EngineSettings, Paths, Settings
from desktop.base.errors import InvalidRequest
from desktop.catalog import Catalog, Fit, GGUFInfo, Hardware, ModelEntry
from desktop.engine import ModelSpec
from desktop.resolve._allowed import Digests, check_allowed
from desktop.resolve._details import ModelDetails, model_details
from desktop.resolve._headers import HeaderCache
from desktop.resolve._locate import InstalledLookup, Located, locate, stable_id
from desktop.resolve._plan import fit, plan_model


@dataclass
class ModelResolver:
    """Resolves model references for the scheduler; cheap to call repeatedly (cached).

    Any thread may call it; ``apply`` and ``register`` change what later calls see.
    """

    catalog: Catalog
    paths: Paths
    engine_settings: EngineSettings
    hardware: Hardware
    gpu_offload: bool
    installed: InstalledLookup | None = None
    registered: dict[str, Path] = field(default_factory=dict)
    allowed_models: list[str] | None = None  # machine policy: ids or SHA-256 digests
    shared_models_dir: Path | None = None  # read-only models pre-seeded by IT
    # Remote engines: NAME/MODEL -> a spec the load function sends to the remote (or None).
    remote: Callable[[str], ModelSpec | None] | None = None
    # Vision projectors recorded at pull or import: model ref -> mmproj file (or None).
    projectors: Callable[[str], Path | None] | None = None
    _digests: Digests = field(default_factory=Digests, repr=False)
    _headers: HeaderCache = field(default_factory=HeaderCache, repr=False)

    def apply(self, settings: Settings) -> None:
        """Plan the next loads under ``settings``: engine options, allowed models, shared folder."""
        self.engine_settings = settings.engine
        self.allowed_models = settings.allowed_models
        self.shared_models_dir = (
            Path(settings.shared_models_dir) if settings.shared_models_dir else None
        )

    def check_embedding(self, model: str) -> None:
        """Raise unless ``model`` resolves to an embedding model (read from its header)."""
        kind = self(model).kind
        if kind != "embedding":
            article = "an" if kind[0] in "aeiou" else "a"
            raise InvalidRequest(
                f"{model} is {article} {kind} model, not an embedding model; "
                "pick one such as bge-small-en-v1.5 or bge-m3",
                param="embedding_model",
            )

    def register(self, path: Path) -> str:
        """Make a .gguf file known under its stable id (``--model`` on the server)."""
        info = self.info(path)  # validates the file up front
        model_id = stable_id(info.path)
        self.registered[model_id] = info.path
        return model_id

    def info(self, path: Path) -> GGUFInfo:
        """The GGUF header of ``path`` (cached by path and modification time)."""
        return self._headers(path)

    def locate(self, ref: str) -> Located:
        """The first file of the model named ``ref``, its catalog entry and all its shards."""
        return locate(
            ref,
            catalog=self.catalog,
            paths=self.paths,
            registered=self.registered,
            installed=self.installed,
            shared_models_dir=self.shared_models_dir,
        )

    def projector(self, ref: str, entry: ModelEntry | None) -> Path | None:
        """The vision projector ``ref`` loads with: the one recorded when it was pulled or
        imported, else its catalog entry's file where a pull puts it; None: text only."""
        recorded = self.projectors(ref) if self.projectors is not None else None
        if recorded is not None or entry is None or entry.mmproj is None:
            return recorded if recorded is not None and recorded.is_file() else None
        folders = [
            self.paths.models_dir,
            *([self.shared_models_dir] if self.shared_models_dir else []),
        ]
        return next(
            (
                f / entry.repo / entry.mmproj
                for f in folders
                if (f / entry.repo / entry.mmproj).is_file()
            ),
            None,
        )

    def fit(
        self,
        info: GGUFInfo,
        context_length: int | None = None,
        *,
        projector: Path | None = None,
        hardware: Hardware | None = None,
    ) -> Fit:
        """The load plan for ``info`` on this machine (or on ``hardware``, another one,
        whose GPU is offloaded to), honouring the user's settings (a vision
        ``projector``'s bytes count with the model's)."""
        return fit(
            info,
            hardware or self.hardware,
            self.engine_settings,
            gpu_offload=self.gpu_offload if hardware is None else bool(hardware.gpus),
            context_length=context_length,
            projector=projector,
        )

    def check_allowed(self, model_id: str, files: list[Path]) -> None:
        """Refuse a model the machine policy does not list (by id or file SHA-256)."""
        check_allowed(model_id, files, self.allowed_models, self._digests)

    def details(self, ref: str, known: Mapping[str, str] | None = None) -> ModelDetails:
        """Everything the model details panel shows about ``ref`` (blocks: reads the header
        and hashes each file whose SHA-256 ``known`` (path -> digest) does not give)."""
        located = self.locate(ref)
        info = self.info(located[0])
        projector = self.projector(ref, located[1])
        return model_details(
            ref,
            located,
            info,
            self.fit(info, projector=projector),
            digest=self._digests,
            projector=projector,
            known=known,
        )

    def __call__(
        self, ref: str, *, context_length: int | None = None, cpu_moe: str | int | None = None
    ) -> ModelSpec:
        """Resolve ``ref`` to a ModelSpec fitted to this machine (``cpu_moe``: this
        request's ``engine.cpu_moe``, a chat's own expert placement)."""
        if self.remote is not None and (spec := self.remote(ref)) is not None:
            return spec
        path, entry, files = self.locate(ref)
        self.check_allowed(entry.id if entry else stable_id(path), files)
        return plan_model(
            ref,
            path,
            entry,
            files,
            self.info(path),
            hardware=self.hardware,
            settings=(
                self.engine_settings
                if cpu_moe is None
                else self.engine_settings.model_copy(update={"cpu_moe": cpu_moe})
            ),
            gpu_offload=self.gpu_offload,
            paths=self.paths,
            context_length=context_length,
            projector=self.projector(ref, entry),
        )
