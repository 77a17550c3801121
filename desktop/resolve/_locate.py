"""Where a model's file is: the one concern of turning a name into files on disk.

Five places, in this order: a file registered under its stable id (``--model``), a path,
the installed index (pulls and imports), the catalog's own download folder, and IT's
read-only shared folder with the same ``<repo>/<file>`` layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from desktop.base.config import Paths, user_path
from desktop.base.errors import ModelNotFound
from desktop.catalog import Catalog, ModelEntry

# An installed-model lookup: catalog id -> local file(s), filled by the model store.
InstalledLookup = Callable[[str], list[Path] | None]
# The first file of a model, its catalog entry (None for a bare file) and all its shards.
Located = tuple[Path, ModelEntry | None, list[Path]]


def stable_id(path: Path) -> str:
    """The id a bare .gguf file is known by: its file name without the extension."""
    return path.name.removesuffix(".gguf")


def looks_like_path(ref: str) -> bool:
    """Whether ``ref`` names a file rather than a catalog id."""
    return ref.endswith(".gguf") or "/" in ref or "\\" in ref or ref.startswith(".")


def default_files(entry: ModelEntry, paths: Paths, quant: str | None = None) -> list[Path]:
    """Where a pulled catalog model's files live: ``models/<repo>/<file>``."""
    chosen = entry.quant(quant)
    return [paths.models_dir / entry.repo / name for name in chosen.files]


def installed_from_mapping(mapping: Mapping[str, list[Path]]) -> InstalledLookup:
    """An installed-model lookup over a plain mapping (tests, bundles)."""
    return mapping.get


def locate(
    ref: str,
    *,
    catalog: Catalog,
    paths: Paths,
    registered: Mapping[str, Path],
    installed: InstalledLookup | None = None,
    shared_models_dir: Path | None = None,
) -> Located:
    """The files of the model named ``ref``; ModelNotFound says what to do when it is absent."""
    if ref in registered:
        path = registered[ref]
        if not path.is_file():
            # Deleted or moved since it was registered: absent, like an unknown name, so
            # listings drop it and a request is refused up front, not at load time.
            raise ModelNotFound(
                f"model file not found: {path} ({ref} was deleted or moved)",
                kind="file_not_found",
                params={"path": str(path)},
            )
        return path, None, [path]
    if looks_like_path(ref):
        path = user_path(ref)
        if not path.exists():
            raise ModelNotFound(
                f"model file not found: {ref}", kind="file_not_found", params={"path": ref}
            )
        return path.resolve(), None, [path.resolve()]
    found = installed(ref) if installed else None
    if found:
        # Pulled or imported models (``id``, ``id:QUANT``, REPO:FILE pulls, imports)
        # are known to the installed index, catalog entry or not.
        return found[0], catalog.find(ref.partition(":")[0]), found
    entry = catalog.get(ref)
    files = default_files(entry, paths)
    if not all(f.exists() for f in files) and shared_models_dir is not None:
        # IT's pre-seeded, read-only folder uses the same <repo>/<file> layout.
        shared = [shared_models_dir / entry.repo / f.name for f in files]
        files = shared if all(f.exists() for f in shared) else files
    if not all(f.exists() for f in files):
        raise ModelNotFound(
            f"{ref} is not downloaded yet; run 'edgedesk models pull {ref}' first",
            kind="not_downloaded",
            params={"model": ref},
        )
    return files[0], entry, files
