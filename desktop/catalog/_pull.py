"""``pull``: from a catalog id or ``REPO:FILE`` to a verified, indexed model on disk.

The one sequence the CLI and the GUI share: pin the repo to a commit, read sizes and
SHA-256 from the Hub, download every file of the model (split shards together), then
record it in the installed index. ``discard_partial`` is the way back from a paused pull:
it deletes what the pull left in ``.part`` files, and nothing else.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.catalog._download import Downloader, ProgressFn
from desktop.catalog._entries import Catalog
from desktop.catalog._hub import HubClient, quant_of
from desktop.catalog._installed import InstalledIndex, InstalledModel, model_id_for
from desktop.catalog._shards import SHARD_RE, first_shard, shard_group, shard_names

_REPO_FILE = re.compile(r"^(?P<repo>[\w.\-]+/[\w.\-]+):(?P<file>[^:]+\.gguf)$")


@dataclass(frozen=True)
class PullTarget:
    """What to fetch: a repo, its file(s), and the catalog entry it belongs to (if any)."""

    repo: str
    files: tuple[str, ...]
    model_id: str
    catalog_id: str | None = None
    quant: str | None = None
    projector: str | None = None  # a vision model's mmproj file in the same repo


def parse_target(ref: str, catalog: Catalog, quant: str | None = None) -> PullTarget:
    """A catalog id (with ``quant``) or ``org/repo:file.gguf`` as a pull target."""
    match = _REPO_FILE.match(ref)
    if match:
        if quant:
            raise InvalidRequest("--quant applies to catalog ids; REPO:FILE already names the file")
        repo, name = match["repo"], match["file"]
        for entry in catalog:
            for q in entry.quants:
                if entry.repo == repo and name in q.files:
                    return PullTarget(
                        repo,
                        q.files,
                        _catalog_model_id(entry.id, q.name, entry.default_quant),
                        entry.id,
                        q.name,
                        entry.mmproj,
                    )
        return PullTarget(repo, (name,), model_id_for(name), None, quant_of(name))
    if ":" in ref and "/" in ref:
        raise InvalidRequest(
            f"'{ref}' is not REPO:FILE; use e.g. 'bartowski/Some-Model-GGUF:Some-Model-Q4_K_M.gguf'"
        )
    entry = catalog.get(ref)
    chosen = entry.quant(quant)
    return PullTarget(
        entry.repo,
        chosen.files,
        _catalog_model_id(entry.id, chosen.name, entry.default_quant),
        entry.id,
        chosen.name,
        entry.mmproj,
    )


def _catalog_model_id(entry_id: str, quant: str, default: str) -> str:
    return entry_id if quant.upper() == default.upper() else f"{entry_id}:{quant}"


def pull(
    target: PullTarget,
    *,
    hub: HubClient,
    downloader: Downloader,
    index: InstalledIndex,
    models_dir: Path,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> InstalledModel:
    """Download ``target`` (all shards, and a vision model's projector), verify it, and
    record it as installed."""
    revision = hub.commit(target.repo)
    files = list(target.files)
    if len(files) == 1 and SHARD_RE.match(files[0]):
        files = shard_group(files[0], hub.list_files(target.repo, revision))
    wanted = [*files, target.projector] if target.projector else files
    remote = hub.files(target.repo, wanted, revision)
    fetched = downloader.pull(remote, models_dir, progress=progress, cancel=cancel)
    projector = fetched.pop() if target.projector else None
    model = InstalledModel(
        id=target.model_id,
        files=tuple(str(f.path) for f in fetched),
        size=sum(f.size for f in fetched),
        sha256=tuple(f.sha256 for f in fetched),
        source="hub",
        repo=target.repo,
        revision=revision,
        catalog_id=target.catalog_id,
        quant=target.quant,
        managed=True,
        projector=str(projector.path) if projector else None,
        projector_sha256=projector.sha256 if projector else None,
    )
    return index.add(model)


def target_paths(target: PullTarget, models_dir: Path) -> list[Path]:
    """Where every file of ``target`` lands (all shards of a split model), without the Hub."""
    names: list[str] = []
    for name in target.files:
        # A split model named by one shard: the others follow from "-000NN-of-000MM".
        names.extend(n for n in shard_names(name) if n not in names)
    if target.projector:
        names.append(target.projector)
    return [models_dir / target.repo / name for name in names]


def partial_files(target: PullTarget, *, index: InstalledIndex, models_dir: Path) -> list[Path]:
    """What an unfinished pull of ``target`` left on disk: ``.part`` files, finished shards.

    A finished shard counts only while another shard is still missing and no installed
    model lists it; a complete model is never "partial".
    """
    paths = target_paths(target, models_dir)
    parts = [p.with_name(p.name + ".part") for p in paths]
    return [p for p in parts if p.is_file()] + _unfinished_leftovers(paths, index)


def _unfinished_leftovers(paths: list[Path], index: InstalledIndex) -> list[Path]:
    if all(p.is_file() for p in paths):
        return []
    listed = {Path(f).resolve() for model in index.all() for f in model.files}
    return [p for p in paths if p.is_file() and p.resolve() not in listed]


def discard_partial(
    target: PullTarget, *, downloader: Downloader, index: InstalledIndex, models_dir: Path
) -> int:
    """Throw away an unfinished pull of ``target`` (every shard); returns the bytes freed.

    Deletes its ``.part`` files and the shards it finished, so nothing is left over;
    files an installed model lists, and a complete model, are never touched. A pull
    still writing one of the files raises DownloadError instead.
    """
    paths = target_paths(target, models_dir)
    # Which shards are leftovers is decided under the locks: another pull may finish the
    # model (and list it in the index) while this waits for them.
    return downloader.discard(
        paths, root=models_dir, finished=lambda: _unfinished_leftovers(paths, index)
    )


def unfinished_pulls(models_dir: Path, catalog: Catalog) -> list[str]:
    """``REPO:FILE`` of each pull from outside the catalog that left a ``.part`` file.

    Paused, interrupted or killed: the Models screen lists them so they can be resumed or
    cancelled after a restart. Catalog models are left out (their own rows show them); a
    split model is named by its first shard, as a pull of it would be.
    """
    refs: list[str] = []
    for part in sorted(models_dir.glob("*/*/*.gguf.part")):
        name = first_shard(part.name.removesuffix(".part"))
        ref = f"{part.parent.parent.name}/{part.parent.name}:{name}"
        try:
            target = parse_target(ref, catalog)
        except EdgeDeskError:
            continue  # a name our REPO:FILE form cannot carry; `models rm` still finds it
        if target.catalog_id is None and ref not in refs:
            refs.append(ref)
    return refs
