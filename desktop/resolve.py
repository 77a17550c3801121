"""Turn what a user types (a catalog id, an installed model, a .gguf path) into a load plan.

This sits above the catalog and the engine: it reads the GGUF header, fits the model to
this machine, and hands the engine a ``ModelSpec`` that names only a file and numbers.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from desktop.catalog.entries import Catalog, ModelEntry
from desktop.catalog.gguf_info import GGUFInfo, read_gguf
from desktop.catalog.hardware import Fit, Hardware, fit_model
from desktop.config import EngineSettings, Paths, Settings
from desktop.engine.templates import resolve_template
from desktop.engine.types import LocalPlan, ModelKind, ModelSpec
from desktop.errors import (
    InvalidRequest,
    ModelFileError,
    ModelNotAllowed,
    ModelNotFound,
    TemplateMissing,
)
from desktop.filebytes import sha256_file

MAX_CONTEXT = 1_048_576
# An installed-model lookup: catalog id -> local file(s), filled by the model store.
InstalledLookup = Callable[[str], list[Path] | None]


def stable_id(path: Path) -> str:
    """The id a bare .gguf file is known by: its file name without the extension."""
    return path.name.removesuffix(".gguf")


def looks_like_path(ref: str) -> bool:
    """Whether ``ref`` names a file rather than a catalog id."""
    return ref.endswith(".gguf") or "/" in ref or "\\" in ref or ref.startswith(".")


def physical_cores() -> int:
    """CPU cores without hyper-threading siblings: llama.cpp's decode is memory-bound, so
    extra logical threads only contend (llama-server's default is the same)."""
    return psutil.cpu_count(logical=False) or psutil.cpu_count() or 1


def effective_parallel(settings: EngineSettings) -> int:
    """Slots per model: ``engine.parallel``, capped by ``engine.max_parallel`` (policy)."""
    cap = settings.max_parallel
    return min(settings.parallel, cap) if cap is not None else settings.parallel


def default_files(entry: ModelEntry, paths: Paths, quant: str | None = None) -> list[Path]:
    """Where a pulled catalog model's files live: ``models/<repo>/<file>``."""
    chosen = entry.quant(quant)
    return [paths.models_dir / entry.repo / name for name in chosen.files]


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

    @property
    def kv_cache_bytes(self) -> int:
        """The KV cache's memory at the planned context and cache type."""
        return self.info.kv_bytes_per_token(self.fit.cache_type) * self.fit.context_length


@dataclass
class ModelResolver:
    """Resolves model references for the scheduler; cheap to call repeatedly (cached)."""

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
    _digest_cache: dict[tuple[Path, float], str] = field(default_factory=dict, repr=False)
    _info_cache: dict[tuple[Path, float], GGUFInfo] = field(default_factory=dict, repr=False)

    def apply(self, settings: Settings) -> None:
        """Plan the next loads under ``settings``: engine options, allowed models, shared folder."""
        self.engine_settings = settings.engine
        self.allowed_models = settings.allowed_models
        self.shared_models_dir = (Path(settings.shared_models_dir)
                                  if settings.shared_models_dir else None)

    def check_embedding(self, model: str) -> None:
        """Raise unless ``model`` resolves to an embedding model (read from its header)."""
        kind = self(model).kind
        if kind != "embedding":
            article = "an" if kind[0] in "aeiou" else "a"
            raise InvalidRequest(f"{model} is {article} {kind} model, not an embedding model; "
                                 "pick one such as bge-small-en-v1.5 or bge-m3",
                                 param="embedding_model")

    def register(self, path: Path) -> str:
        """Make a .gguf file known under its stable id (``--model`` on the server)."""
        info = self.info(path)  # validates the file up front
        model_id = stable_id(info.path)
        self.registered[model_id] = info.path
        return model_id

    def info(self, path: Path) -> GGUFInfo:
        """The GGUF header of ``path`` (cached by path and modification time)."""
        resolved = path.expanduser().resolve()
        if not resolved.exists():
            raise ModelNotFound(f"model file not found: {path}", kind="file_not_found",
                                params={"path": path})
        key = (resolved, resolved.stat().st_mtime)
        if key not in self._info_cache:
            self._info_cache[key] = read_gguf(resolved)
        return self._info_cache[key]

    def locate(self, ref: str) -> tuple[Path, ModelEntry | None, list[Path]]:
        """The first file of the model named ``ref``, its catalog entry and all its shards."""
        if ref in self.registered:
            path = self.registered[ref]
            return path, None, [path]
        if looks_like_path(ref):
            path = Path(ref).expanduser()
            if not path.exists():
                raise ModelNotFound(f"model file not found: {ref}", kind="file_not_found",
                                    params={"path": ref})
            return path.resolve(), None, [path.resolve()]
        installed = self.installed(ref) if self.installed else None
        if installed:
            # Pulled or imported models (``id``, ``id:QUANT``, REPO:FILE pulls, imports)
            # are known to the installed index, catalog entry or not.
            return installed[0], self.catalog.find(ref.partition(":")[0]), installed
        entry = self.catalog.get(ref)
        files = default_files(entry, self.paths)
        if not all(f.exists() for f in files) and self.shared_models_dir is not None:
            # IT's pre-seeded, read-only folder uses the same <repo>/<file> layout.
            shared = [self.shared_models_dir / entry.repo / f.name for f in files]
            files = shared if all(f.exists() for f in shared) else files
        if not all(f.exists() for f in files):
            raise ModelNotFound(
                f"{ref} is not downloaded yet; run 'edgedesk models pull {ref}' first",
                kind="not_downloaded", params={"model": ref},
            )
        return files[0], entry, files

    def fit(self, info: GGUFInfo, context_length: int | None = None) -> Fit:
        """The load plan for ``info`` on this machine, honouring the user's settings."""
        ctx = context_length or self.engine_settings.context_length
        if ctx is not None and not 64 <= ctx <= MAX_CONTEXT:
            raise InvalidRequest(
                f"context length {ctx} is out of range; use a value between 64 and {MAX_CONTEXT}",
                param="context_length",
            )
        return fit_model(info, self.hardware, gpu_offload=self.gpu_offload, context_length=ctx,
                         gpu_layers=self.engine_settings.gpu_layers,
                         parallel=effective_parallel(self.engine_settings),
                         cache_type=self.engine_settings.cache_type)

    def _sha256(self, path: Path) -> str:
        key = (path, path.stat().st_mtime)
        if key not in self._digest_cache:
            self._digest_cache[key] = sha256_file(path)
        return self._digest_cache[key]

    def _loadable(self, path: Path) -> Path:
        """``path``, or a link to it named in UTF-8: llama.cpp takes a path as UTF-8 text,
        which cannot spell a file name holding other bytes (possible on Linux)."""
        try:
            os.fspath(path).encode("utf-8")
            return path
        except UnicodeEncodeError:
            pass
        digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:32]
        link = self.paths.cache_dir / "model-links" / f"{digest}.gguf"
        try:
            link.parent.mkdir(parents=True, exist_ok=True)
            if not (link.is_symlink() and os.readlink(link) == os.fspath(path)):
                staged = link.with_name(f"{digest}.{os.getpid()}.tmp")
                staged.unlink(missing_ok=True)
                staged.symlink_to(path)
                os.replace(staged, link)
        except OSError:
            return path  # the engine then names the file in its error
        return link

    def check_allowed(self, model_id: str, files: list[Path]) -> None:
        """Refuse a model the machine policy does not list (by id or file SHA-256)."""
        allowed = self.allowed_models
        if allowed is None or model_id in allowed:
            return
        digests = {a.lower() for a in allowed if len(a) == 64}
        if digests and all(self._sha256(f) in digests for f in files):
            return
        raise ModelNotAllowed(
            f"{model_id} is blocked by your organization's policy (AllowedModels); "
            "ask IT to allow it or pick an allowed model",
            kind="policy_blocked", params={"model": model_id},
        )

    def details(self, ref: str, known: Mapping[str, str] | None = None) -> ModelDetails:
        """Everything the model details panel shows about ``ref`` (blocks: reads the header
        and hashes each file whose SHA-256 ``known`` (path -> digest) does not give)."""
        path, entry, files = self.locate(ref)
        info = self.info(path)
        digests = known or {}
        listed = tuple(ModelFile(f, f.stat().st_size,
                                 digests.get(str(f)) or self._sha256(f)) for f in files)
        shown = entry.id if entry else stable_id(path) if looks_like_path(ref) else ref
        try:
            template = resolve_template(
                model_name=shown, architecture=info.architecture,
                gguf_template=info.chat_template,
                catalog_template=entry.chat_template if entry else None)
        except TemplateMissing:
            template = None
        return ModelDetails(shown, info, entry, listed, self.fit(info),
                            template.text if template else None,
                            template.source if template else "")

    def __call__(self, ref: str, *, context_length: int | None = None) -> ModelSpec:
        """Resolve ``ref`` to a ModelSpec fitted to this machine."""
        if self.remote is not None and (spec := self.remote(ref)) is not None:
            return spec
        path, entry, files = self.locate(ref)
        self.check_allowed(entry.id if entry else stable_id(path), files)
        info = self.info(path)
        if entry is not None and (entry.kind == "chat") != (_kind_of(info) == "chat"):
            # A file installed under a catalog id that holds another kind of model (an
            # import from before ids stopped being taken from file names): the catalog's
            # kind would send a chat model to embed, which crashes llama.cpp.
            raise ModelFileError(
                f"{path} is installed as {entry.id} but holds {_a(_kind_of(info))} model, "
                f"not {_a(entry.kind)} model; remove it with 'edgedesk models rm {ref}' and pull "
                "or import the right file")
        plan = self.fit(info, context_length)
        kind = entry.kind if entry else _kind_of(info)
        threads = self.engine_settings.threads or physical_cores()
        return ModelSpec(
            path=self._loadable(path) if len(files) == 1 else path,
            model_id=entry.id if entry else stable_id(path),
            kind=kind,
            context_length=plan.context_length,
            gpu_layers=plan.gpu_layers,
            chat_template=entry.chat_template if entry else None,
            reasoning_format=entry.reasoning if entry else "none",
            threads=threads,
            extra_files=tuple(files[1:]),
            plan=LocalPlan(parallel=plan.parallel,
                           batch_threads=self.engine_settings.batch_threads or threads,
                           cache_type="q8_0" if plan.cache_type == "q8_0" else "f16",
                           prompt_cache_dir=self.paths.cache_dir / "prompt-cache",
                           prompt_cache_disk_bytes=(
                               self.engine_settings.prompt_cache_disk_mb * 1024 * 1024),
                           lookup_draft=self.engine_settings.prompt_lookup_tokens,
                           estimated_bytes=plan.estimated_bytes),
        )


_ENCODER_ARCHS = frozenset({"bert", "nomic-bert", "jina-bert-v2", "xlm-roberta", "modern-bert"})


def _kind_of(info: GGUFInfo) -> ModelKind:
    if info.pooling_type == 4:  # llama.cpp rank pooling: a cross-encoder reranker
        return "reranker"
    if info.architecture in _ENCODER_ARCHS:
        return "embedding"
    return "chat"


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def installed_from_mapping(mapping: Mapping[str, list[Path]]) -> InstalledLookup:
    """An installed-model lookup over a plain mapping (tests, bundles)."""
    return mapping.get
