"""Rows 4 and 13: two indexings of one collection, and a huge one-line file."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from desktop.retrieval import _loaders as loaders
from desktop.retrieval._indexer import IndexProgress, IndexReport, Library, SchedulerEmbedder
from desktop.store._db import open_database

MODEL = "tiny-embed"


@pytest.fixture(scope="module")
def scheduler(tiny_embed: Path) -> Iterator[Scheduler]:
    spec = ModelSpec(tiny_embed, MODEL, kind="embedding", context_length=512)
    sched = Scheduler(load_engine, {MODEL: spec}.__getitem__)
    yield sched
    sched.close()


class _Counting(SchedulerEmbedder):
    calls: int = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return super().embed(texts)


def _library(scheduler: Scheduler, **options: object) -> tuple[Library, _Counting]:
    embedder = _Counting(scheduler, MODEL)
    database = open_database(Paths.from_env().database)
    library = Library(
        database,
        lambda _model: embedder,
        default_model=MODEL,
        lock_dir=Paths.from_env().data_dir / "locks",
        **options,
    )  # type: ignore[arg-type]
    return library, embedder


def test_a_second_indexing_of_the_same_collection_waits_then_finds_it_done(
    scheduler: Scheduler, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(3):
        (folder / f"note{n}.txt").write_text(f"note number {n} about zebras\n")
    window, _ = _library(scheduler)  # two connections, as two processes have
    terminal, _ = _library(scheduler)
    first_started, let_first_go, second_waits = (threading.Event() for _ in range(3))

    def hold(update: IndexProgress) -> None:
        if update.path is not None and not first_started.is_set():
            first_started.set()
            assert let_first_go.wait(60)

    reports: dict[str, IndexReport] = {}
    errors: list[BaseException] = []

    def run(name: str, library: Library, progress: object) -> None:
        try:
            reports[name] = library.add("papers", [folder], progress=progress)  # type: ignore[arg-type]
        except BaseException as exc:
            errors.append(exc)

    one = threading.Thread(target=run, args=("window", window, hold))
    one.start()
    assert first_started.wait(60)

    def waiting(update: IndexProgress) -> None:
        if update.waiting:
            second_waits.set()

    two = threading.Thread(target=run, args=("terminal", terminal, waiting))
    two.start()
    assert second_waits.wait(60)
    let_first_go.set()
    one.join(60)
    two.join(60)
    assert not errors, errors
    assert reports["window"].added == 3
    assert reports["terminal"].unchanged == 3 and reports["terminal"].added == 0
    assert terminal.collections()[0].documents == 3


def test_a_huge_line_is_cut_into_small_pieces() -> None:
    blocks = loaders.paragraphs("word " * 2_000_000 + "\n\nnext paragraph\n")
    assert max(len(b.text) for b in blocks) <= loaders.MAX_LINE_CHARS
    assert blocks[-1].text == "next paragraph" and blocks[-1].line_start == 3
    assert all(b.line_start == 1 for b in blocks[:-1])


def test_an_interrupted_big_file_keeps_its_batches_and_the_next_scan_finishes_it(
    scheduler: Scheduler, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    words = [f"w{n % 997}" for n in range(60_000)]  # one line, ~300 KB
    (folder / "one-line.txt").write_text(" ".join(words))
    library, embedder = _library(scheduler, max_tokens=64, overlap_tokens=0, batch_size=8)
    cancel = threading.Event()
    seen: list[int] = []

    def progress(update: IndexProgress) -> None:
        seen.append(update.chunks_embedded)
        if update.chunks_embedded >= 24:  # three batches stored: stop
            cancel.set()

    first = library.add("big", [folder], progress=progress, cancel=cancel)
    assert first.cancelled and first.added == 0
    assert seen[-1] >= 24  # progress moved while inside the one file
    [info] = library.collections()
    assert info.documents == 1 and info.chunks >= 24  # what was embedded is kept
    kept = info.chunks

    embedder.calls = 0
    second = library.rescan("big")
    assert second.added == 0 and second.updated == 1 and not second.cancelled
    assert second.chunks_reused >= kept  # the stored batches were not embedded again
    [done] = library.collections()
    assert done.documents == 1 and done.chunks > kept
    assert library.rescan("big").unchanged == 1


def test_docs_add_in_a_terminal_waits_for_the_window_and_says_so(
    tmp_path: Path, tiny_embed: Path
) -> None:
    import os
    import subprocess
    import sys

    from desktop.retrieval._scanlock import collection_lock

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("zebras\n")
    with collection_lock(Paths.from_env().data_dir / "locks", "papers", on_wait=lambda: None):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "desktop",
                "docs",
                "add",
                str(folder),
                "--collection",
                "papers",
                "--embedding-model",
                str(tiny_embed),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()  # blocks until the command reports its wait
            assert "is indexing this collection; waiting for it to finish" in line
        except BaseException:
            proc.kill()
            raise
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "papers: 1 added" in out and "Traceback" not in err
