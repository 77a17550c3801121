"""The installed-models index: what is on disk, where, and which bytes it should hold.

Pulled models live under ``models_dir`` as ``<org>/<repo>/<file>`` so other tools can
use them; imported ones stay where the user keeps them. The index is one JSON file,
rewritten atomically under a lock, so a crash or two processes never leave it
half-written. GGUFs already in the standard Hugging Face cache can be discovered and
registered in place.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from filelock import FileLock

from desktop.base.config import user_path
from desktop.base.errors import InvalidRequest, ModelFileError, ModelNotFound
from desktop.base.filebytes import sha256_file
from desktop.catalog._gguf_info import read_gguf
from desktop.catalog._shards import is_first_shard, shard_group, shard_stem

INDEX_VERSION = 1


@dataclass(frozen=True)
class InstalledModel:
    """One installed model: its files (all shards), their digests and where they came from."""

    id: str
    files: tuple[str, ...]
    size: int
    sha256: tuple[str, ...]
    source: str  # "hub", "import" or "hf-cache"
    repo: str | None = None
    revision: str | None = None
    catalog_id: str | None = None
    quant: str | None = None
    managed: bool = True  # files we downloaded (``rm`` deletes them); imports are left alone
    installed_at: float = field(default_factory=time.time)
    # A vision model's projector (mmproj GGUF), loaded beside it; None: text only.
    projector: str | None = None
    projector_sha256: str | None = None

    @property
    def paths(self) -> list[Path]:
        """The model's files as paths, first shard first."""
        return [Path(f) for f in self.files]

    @property
    def projector_path(self) -> Path | None:
        """The projector file, or None for a text-only model."""
        return Path(self.projector) if self.projector else None


@dataclass(frozen=True)
class CachedGGUF:
    """A GGUF found in the Hugging Face cache."""

    repo: str
    revision: str
    path: Path


def model_id_for(filename: str) -> str:
    """The id a file is known by: its name without ``.gguf`` and without a shard suffix."""
    return shard_stem(filename)


class InstalledIndex:
    """Reads and atomically updates ``installed.json``; any thread, any process may call it.

    Files under ``models_dir`` are stored relative to it (the data folder can move);
    others absolute. The file is parsed again only when it changed on disk.
    """

    def __init__(
        self, index_path: Path, models_dir: Path, *, reserved_ids: Collection[str] = ()
    ) -> None:
        self.index_path = index_path
        self.models_dir = models_dir
        # Catalog ids: a file named like one must not take its id, or its catalog entry
        # (kind, template) would be applied to whatever the file really holds.
        self.reserved_ids = frozenset(reserved_ids)
        self._lock = FileLock(str(index_path) + ".lock")
        self._parsed: tuple[tuple[int, int, int], dict[str, InstalledModel]] | None = None

    def _read(self) -> dict[str, InstalledModel]:
        """The index as it is on disk now, parsed only when the file changed since last time."""
        try:
            stat = self.index_path.stat()
        except FileNotFoundError:
            return {}
        # os.replace gives every write a new inode: a change is seen even within one tick.
        signature = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        cached = self._parsed
        if cached is None or cached[0] != signature:
            cached = (signature, self._parse())
            self._parsed = cached  # one assignment: a reader sees the old or the new parse
        return dict(cached[1])  # callers edit their copy before _write

    def _parse(self) -> dict[str, InstalledModel]:
        try:
            # surrogateescape both ways: a file name that is not UTF-8 round-trips.
            raw = json.loads(self.index_path.read_text(encoding="utf-8", errors="surrogateescape"))
            models = (self._from_disk(_model(m)) for m in raw.get("models", []))
            return {m.id: self._found_here(m) for m in models}
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelFileError(
                f"{self.index_path} is damaged ({exc}); move it away and re-import your models"
            ) from None

    def _write(self, models: Mapping[str, InstalledModel]) -> None:
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "version": INDEX_VERSION,
            "models": [asdict(self._to_disk(m)) for m in models.values()],
        }
        tmp = self.index_path.with_name(self.index_path.name + ".tmp")
        with tmp.open("w", encoding="utf-8", errors="surrogateescape") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.index_path)

    def _to_disk(self, model: InstalledModel) -> InstalledModel:
        """Files under the models folder recorded relative to it, so they move with it."""
        root = self.models_dir.absolute()

        def stored(name: str) -> str:
            path = Path(name).absolute()
            return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

        return replace(
            model,
            files=tuple(stored(f) for f in model.files),
            projector=stored(model.projector) if model.projector else None,
        )

    def _from_disk(self, model: InstalledModel) -> InstalledModel:
        """Relative entries joined to this models folder; absolute ones (older indexes,
        imports kept elsewhere) as they are."""

        def here(name: str) -> str:
            return str(self.models_dir.absolute() / name) if not Path(name).is_absolute() else name

        return replace(
            model,
            files=tuple(here(f) for f in model.files),
            projector=here(model.projector) if model.projector else None,
        )

    def _found_here(self, model: InstalledModel) -> InstalledModel:
        """``model`` with downloaded files that moved along with the data folder found again.

        Indexes written before paths were kept relative hold absolute ones; after the
        data folder moved (``edgedesk data move``, a copied folder used with ``data
        use``, a restored backup) they name the old place. A managed file lives under
        some ``.../models/<rest>``: the same ``<rest>`` under this index's models
        folder is the file, if it is there.
        """
        if not model.managed or all(p.exists() for p in model.paths):
            return model
        files = []
        for path in model.paths:
            moved = next(
                (
                    self.models_dir.joinpath(*path.parts[i + 1 :])
                    for i in range(len(path.parts) - 2, -1, -1)
                    if path.parts[i] == "models"
                    and self.models_dir.joinpath(*path.parts[i + 1 :]).is_file()
                ),
                None,
            )
            files.append(str(moved) if moved is not None and not path.exists() else str(path))
        return replace(model, files=tuple(files))

    def all(self) -> list[InstalledModel]:
        """Every installed model, in the order installed."""
        return sorted(self._read().values(), key=lambda m: m.installed_at)

    def get(self, model_id: str) -> InstalledModel | None:
        """The model installed under exactly ``model_id``."""
        return self._read().get(model_id)

    def matching(self, ref: str) -> list[InstalledModel]:
        """Models answering to ``ref``: the exact id, else every quant of a catalog id."""
        models = self._read()
        if ref in models:
            return [models[ref]]
        return [m for m in models.values() if m.catalog_id == ref]

    def lookup(self, ref: str) -> list[Path] | None:
        """The resolver hook: files of the installed model ``ref`` (None if not installed).

        An imported model whose file was deleted or moved raises ModelNotFound saying so:
        "unknown model" would send the person looking in the catalog.
        """
        matches = self.matching(ref)
        found = [m for m in matches if all(p.exists() for p in m.paths)]
        if found:
            return found[0].paths
        imported = next((m for m in matches if not m.managed), None)
        if imported is not None:
            missing = next(p for p in imported.paths if not p.exists())
            raise ModelNotFound(
                f"{ref} was imported from {missing}, which is no longer there; import the "
                f"file again from where it is now, or forget it with 'edgedesk models rm "
                f"{imported.id}'"
            )
        return None

    def projector_of(self, ref: str) -> Path | None:
        """The resolver hook: the projector recorded for the installed model ``ref``
        (None: none recorded, or the model is not installed)."""
        found = [m for m in self.matching(ref) if all(p.exists() for p in m.paths)]
        return found[0].projector_path if found else None

    def add(self, model: InstalledModel) -> InstalledModel:
        """Record ``model`` (replacing an entry with the same id)."""
        with self._lock:
            models = self._read()
            models[model.id] = model
            self._write(models)
        return model

    def unique_id(self, base: str, files: tuple[str, ...]) -> str:
        """``base``, or ``base-2``… when another model already uses that id."""
        models = self._read()
        candidate, n = base, 1
        while candidate in models and models[candidate].files != files:
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    def remove(self, ref: str) -> InstalledModel:
        """Forget ``ref``; delete its files only if we downloaded them."""
        with self._lock:
            models = self._read()
            found = [m for m in models.values() if m.id == ref] or [
                m for m in models.values() if m.catalog_id == ref
            ]
            if not found:
                raise ModelNotFound(
                    f"{ref} is not installed; see 'edgedesk models list'",
                    kind="not_installed",
                    params={"model": ref},
                )
            if len(found) > 1:
                raise InvalidRequest(
                    f"{ref} is installed as {', '.join(m.id for m in found)}; "
                    "name the one to remove"
                )
            model = found[0]
            del models[model.id]
            self._write(models)
        if model.managed:
            for path in model.paths:
                self._delete_managed(path)
            shared = {m.projector for m in models.values()}
            if model.projector_path is not None and model.projector not in shared:
                # Quants of one catalog model share its projector: the last one takes it.
                self._delete_managed(model.projector_path)
        return model

    def _delete_managed(self, path: Path) -> None:
        root = self.models_dir.resolve()
        resolved = path.resolve()
        if root not in resolved.parents:
            return  # never delete outside our models folder, whatever the index says
        for leftover in (resolved, resolved.with_name(resolved.name + ".part")):
            leftover.unlink(missing_ok=True)
        folder = resolved.parent
        while folder != root and folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent

    def import_file(
        self,
        path: Path,
        *,
        source: str = "import",
        repo: str | None = None,
        revision: str | None = None,
        projector: Path | None = None,
    ) -> InstalledModel:
        """Register a local GGUF (all its shards) in place: checked, hashed, not copied.

        ``projector`` (a vision model's mmproj GGUF) is checked and recorded with it; a
        model imported before gets it added.
        """
        path = user_path(path)
        if path.is_dir():
            raise ModelFileError(f"{path} is a folder; name the .gguf file to import")
        if not path.is_file():
            raise ModelNotFound(f"no such file: {path}")
        if path.suffix != ".gguf":
            raise ModelFileError(f"{path} is not a .gguf file")
        folder = path.parent
        names = shard_group(path.name, sorted(p.name for p in folder.iterdir()))
        files = [(folder / n).absolute() for n in names]
        info = read_gguf(files[0])  # raises ModelFileError for a truncated or foreign file
        mmproj = check_projector(projector) if projector is not None else None
        if mmproj is not None and info.architecture == "clip":
            raise ModelFileError(
                f"{path} is a vision projector itself; import the model "
                f"file and give this one with --mmproj"
            )
        existing = next((m for m in self.all() if m.files == tuple(map(str, files))), None)
        if existing is not None:
            if mmproj is None or existing.projector == str(mmproj):
                return existing
            return self.add(
                replace(existing, projector=str(mmproj), projector_sha256=sha256_file(mmproj))
            )
        digests = tuple(sha256_file(f) for f in files)
        base = model_id_for(path.name)
        if base in self.reserved_ids:
            base += "-local"
        model = InstalledModel(
            id=self.unique_id(base, tuple(map(str, files))),
            files=tuple(map(str, files)),
            size=sum(f.stat().st_size for f in files),
            sha256=digests,
            source=source,
            repo=repo,
            revision=revision,
            managed=False,
            projector=str(mmproj) if mmproj else None,
            projector_sha256=sha256_file(mmproj) if mmproj else None,
        )
        return self.add(model)


def check_projector(path: Path) -> Path:
    """``path`` as an absolute projector file, or ModelFileError saying what it is instead.

    llama.cpp's projectors are GGUFs of the ``clip`` architecture; a language model given
    as one would be loaded by mtmd and fail far from the cause.
    """
    path = user_path(path)
    if not path.is_file():
        raise ModelNotFound(f"no such projector file: {path}")
    info = read_gguf(path)
    if info.architecture != "clip":
        raise ModelFileError(
            f"{path} is not a vision projector (mmproj) but a "
            f"'{info.architecture}' model; give the mmproj-….gguf file "
            "that belongs to the model"
        )
    return path.absolute()


# Any: one entry of installed.json as parsed; the dataclass checks it
def _model(raw: dict[str, Any]) -> InstalledModel:
    raw = dict(raw)
    raw["files"] = tuple(raw["files"])
    raw["sha256"] = tuple(raw["sha256"])
    return InstalledModel(**raw)


def hf_home(environ: Mapping[str, str]) -> Path:
    """The Hugging Face cache root (``HF_HOME``, else ``~/.cache/huggingface``)."""
    if environ.get("HF_HOME"):
        return user_path(environ["HF_HOME"])
    xdg = environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "huggingface"


def discover_hf_cache(home: Path) -> list[CachedGGUF]:
    """GGUFs in ``<HF_HOME>/hub/models--org--name/snapshots/<rev>/`` (first shards only)."""
    found: list[CachedGGUF] = []
    hub = home / "hub"
    if not hub.is_dir():
        return found
    for repo_dir in sorted(hub.glob("models--*")):
        repo = repo_dir.name.removeprefix("models--").replace("--", "/", 1)
        for snapshot in sorted((repo_dir / "snapshots").glob("*")):
            for gguf in sorted(snapshot.rglob("*.gguf")):
                if not is_first_shard(gguf.name):
                    continue
                if gguf.exists():  # a dangling link means the blob is still downloading
                    found.append(CachedGGUF(repo, snapshot.name, gguf))
    return found
