"""Cancelling a pull: its partial files (every shard) go, nothing else on disk does."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from desktop.base.errors import Cancelled, DownloadError, InvalidRequest
from desktop.base.net import NetGate
from desktop.catalog._download import Downloader, Progress
from desktop.catalog._entries import load_catalog
from desktop.catalog._hub import HubClient
from desktop.catalog._installed import InstalledIndex, InstalledModel
from desktop.catalog._pull import (
    PullTarget,
    discard_partial,
    parse_target,
    partial_files,
    pull,
    target_paths,
)
from tests.fixtures.fake_hub import FakeHub, Fault

REPO = "org/split-GGUF"
SHARDS = [f"m-Q4_K_M-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
SHARD_SIZE = 400_000


class Rig:
    """A Hub client, downloader and installed index over one models folder."""

    def __init__(self, root: Path, url: str = "http://127.0.0.1:9") -> None:
        gate = NetGate(root / "logs" / "network.jsonl")
        self.client = HubClient(gate, url, token_source=lambda: None, sleep=lambda s: None)
        self.downloader = Downloader(
            gate,
            quarantine_dir=root / "quarantine",
            lock_dir=root / "locks",
            stall_s=2.0,
            backoff_s=0.01,
        )
        self.models = root / "models"
        self.index = InstalledIndex(root / "installed.json", self.models)

    def pull(self, target: PullTarget, **kwargs: object) -> InstalledModel:
        return pull(
            target,
            hub=self.client,
            downloader=self.downloader,
            index=self.index,
            models_dir=self.models,
            **kwargs,
        )  # type: ignore[arg-type]

    def discard(self, target: PullTarget) -> int:
        return discard_partial(
            target, downloader=self.downloader, index=self.index, models_dir=self.models
        )


@pytest.fixture
def split_hub(hub: FakeHub) -> FakeHub:
    """The shared fake Hub (tests/conftest.py) serving a model split into shards."""
    hub.add_repo(REPO, {name: os.urandom(SHARD_SIZE) for name in SHARDS})
    return hub


def _split_target() -> PullTarget:
    return parse_target(f"{REPO}:{SHARDS[0]}", load_catalog())


def _pause_in_shard_two(rig: Rig, hub: FakeHub, target: PullTarget) -> None:
    """Pull until the second shard is partly on disk, then pause (the cancel event)."""
    hub.add_fault(REPO, SHARDS[1], Fault("throttle", bytes_per_s=SHARD_SIZE, times=1))
    cancel = threading.Event()

    def progress(p: Progress) -> None:
        if p.filename == SHARDS[1] and SHARD_SIZE < p.done < 2 * SHARD_SIZE:
            cancel.set()

    rig.downloader.progress_interval_s = 0.02
    with pytest.raises(Cancelled):
        rig.pull(target, progress=progress, cancel=cancel)


def test_cancelled_split_pull_leaves_nothing_and_the_next_starts_from_zero(split_hub, tmp_path):
    rig = Rig(tmp_path, split_hub.url)
    target = _split_target()
    _pause_in_shard_two(rig, split_hub, target)
    folder = rig.models / REPO
    part = folder / (SHARDS[1] + ".part")
    kept = part.stat().st_size
    assert (folder / SHARDS[0]).stat().st_size == SHARD_SIZE and 0 < kept < SHARD_SIZE
    assert partial_files(target, index=rig.index, models_dir=rig.models) == [
        part,
        folder / SHARDS[0],
    ]

    assert rig.discard(target) == SHARD_SIZE + kept
    assert not (rig.models / "org").exists()  # no shard, no part, no empty folder
    assert list(rig.models.iterdir()) == []
    assert rig.index.all() == []
    assert partial_files(target, index=rig.index, models_dir=rig.models) == []
    assert rig.discard(target) == 0  # nothing left: a second cancel is harmless

    before = len(split_hub.downloads())
    model = rig.pull(target)
    again = split_hub.downloads()[before:]
    assert [e.range for e in again] == ["bytes=0-"] * 3  # every shard afresh
    assert [p.stat().st_size for p in model.paths] == [SHARD_SIZE] * 3


def test_only_this_models_unfinished_files_go(tmp_path):
    rig = Rig(tmp_path)
    target = PullTarget(REPO, (SHARDS[0],), "m-Q4_K_M")
    paths = target_paths(target, rig.models)
    assert [p.name for p in paths] == SHARDS  # every shard, without asking the Hub
    folder = rig.models / REPO
    folder.mkdir(parents=True)
    paths[0].write_bytes(b"a" * 10)
    paths[1].with_name(SHARDS[1] + ".part").write_bytes(b"b" * 7)
    neighbours = {
        "other-Q8_0.gguf": b"c" * 5,
        "other-Q2_K.gguf.part": b"d" * 3,
        "m-Q4_K_M-00001-of-00002.gguf.part": b"e" * 2,
    }
    for name, data in neighbours.items():
        (folder / name).write_bytes(data)

    assert rig.discard(target) == 17
    assert sorted(p.name for p in folder.iterdir()) == sorted(neighbours)


def test_installed_or_complete_files_are_never_deleted(tmp_path, tiny_chat):
    rig = Rig(tmp_path)
    target = PullTarget(REPO, tuple(SHARDS), "m-Q4_K_M")
    paths = target_paths(target, rig.models)
    paths[0].parent.mkdir(parents=True)
    for path in paths:
        path.write_bytes(b"x" * 4)
    assert partial_files(target, index=rig.index, models_dir=rig.models) == []
    assert rig.discard(target) == 0  # complete: finished, not partial
    assert all(p.exists() for p in paths)

    # An installed model that lists the first shard keeps it, even mid-pull.
    rig.index.add(
        InstalledModel(
            id="shard-one",
            files=(str(paths[0]),),
            size=4,
            sha256=("0" * 64,),
            source="import",
            managed=False,
        )
    )
    paths[2].unlink()
    paths[2].with_name(SHARDS[2] + ".part").write_bytes(b"y" * 2)
    assert rig.discard(target) == 4 + 2
    assert [p.exists() for p in paths] == [True, False, False]


def test_a_model_finished_while_cancel_waits_for_the_locks_is_kept(tmp_path, monkeypatch):
    # Another process holds a shard's lock and finishes the model while Cancel waits for
    # that lock: what is a leftover must be decided after the wait, not before.
    import desktop.catalog._download as download

    rig = Rig(tmp_path)
    target = PullTarget(REPO, tuple(SHARDS), "m-Q4_K_M")
    paths = target_paths(target, rig.models)
    paths[0].parent.mkdir(parents=True)
    paths[0].write_bytes(b"1" * 4)
    paths[1].write_bytes(b"2" * 4)
    last_part = paths[2].with_name(SHARDS[2] + ".part")
    last_part.write_bytes(b"3" * 4)
    assert partial_files(target, index=rig.index, models_dir=rig.models) == [
        last_part,
        paths[0],
        paths[1],
    ]

    def the_other_pull_finishes() -> None:
        last_part.rename(paths[2])
        rig.index.add(
            InstalledModel(
                id="m", files=tuple(map(str, paths)), size=12, sha256=("0" * 64,) * 3, source="hub"
            )
        )

    class RacingLock(download.FileLock):
        raced = False

        def acquire(self, *args: object, **kwargs: object) -> object:
            if not RacingLock.raced:
                RacingLock.raced = True
                the_other_pull_finishes()
            return super().acquire(*args, **kwargs)

    monkeypatch.setattr(download, "FileLock", RacingLock)
    assert rig.discard(target) == 0
    assert RacingLock.raced
    assert [p.read_bytes() for p in paths] == [b"1" * 4, b"2" * 4, b"3" * 4]
    assert [m.id for m in rig.index.all()] == ["m"]


def test_a_pull_still_writing_is_not_cut_short(split_hub, tmp_path):
    rig = Rig(tmp_path, split_hub.url)
    target = parse_target(f"{REPO}:{SHARDS[1]}", load_catalog())
    # Slow enough that the first shard is still being written when the discard gives up.
    split_hub.add_fault(REPO, SHARDS[0], Fault("throttle", bytes_per_s=SHARD_SIZE // 8, times=1))
    started, cancel = threading.Event(), threading.Event()
    errors: list[Exception] = []

    def run() -> None:
        try:
            rig.pull(target, progress=lambda p: started.set() if p.done else None, cancel=cancel)
        except Cancelled as exc:
            errors.append(exc)

    rig.downloader.progress_interval_s = 0.02
    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert started.wait(10)
        with pytest.raises(DownloadError, match="still being downloaded"):
            rig.discard(target)
        assert (rig.models / REPO / (SHARDS[0] + ".part")).exists()
    finally:
        cancel.set()
        thread.join(10)
    assert len(errors) == 1  # it paused when asked, not because its file vanished
    assert rig.discard(target) > 0


def test_a_target_outside_the_models_folder_is_refused(tmp_path):
    rig = Rig(tmp_path)
    outside = tmp_path / "keep.gguf.part"
    outside.write_bytes(b"mine")
    with pytest.raises(InvalidRequest, match="outside the models folder"):
        rig.discard(PullTarget("org/../..", ("keep.gguf",), "keep"))
    assert outside.read_bytes() == b"mine"


def test_unfinished_pulls_lists_paused_hub_pulls_but_not_catalog_or_complete_ones(
    tmp_path: Path,
) -> None:
    from desktop.catalog._pull import unfinished_pulls

    catalog = load_catalog()
    models = tmp_path / "models"
    split = models / "org" / "split-GGUF"
    split.mkdir(parents=True)
    (split / "m-Q4_K_M-00002-of-00003.gguf.part").write_bytes(b"x")  # shard 2 of a split
    (split / "m-Q4_K_M-00003-of-00003.gguf.part").write_bytes(b"x")
    single = models / "someone" / "Other-GGUF"
    single.mkdir(parents=True)
    (single / "Other-Q8_0.gguf.part").write_bytes(b"x")
    (single / "Done-Q8_0.gguf").write_bytes(b"x")  # finished: nothing to resume
    entry = next(iter(catalog))
    quant = entry.quants[0]
    in_catalog = models / entry.repo / (quant.files[0] + ".part")
    in_catalog.parent.mkdir(parents=True)
    in_catalog.write_bytes(b"x")  # its catalog row shows it already
    assert unfinished_pulls(models, catalog) == [
        "org/split-GGUF:m-Q4_K_M-00001-of-00003.gguf",  # one entry, named as pulled
        "someone/Other-GGUF:Other-Q8_0.gguf",
    ]
    assert unfinished_pulls(tmp_path / "nothing-yet", catalog) == []
