"""The installed-models index: import in place, remove, HF-cache discovery, resolver hook."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from desktop.base.errors import ModelFileError, ModelNotFound
from desktop.catalog._installed import InstalledIndex, InstalledModel, discover_hf_cache
from desktop.root.context import build_context

pytestmark = pytest.mark.fast


@pytest.fixture
def index(tmp_path: Path) -> InstalledIndex:
    return InstalledIndex(tmp_path / "data" / "installed.json", tmp_path / "data" / "models")


def test_import_registers_in_place_with_hash(index, tiny_chat, tmp_path):
    local = tmp_path / "mine" / "My-Model-Q8_0.gguf"
    local.parent.mkdir()
    shutil.copy(tiny_chat, local)
    model = index.import_file(local)
    assert model.id == "My-Model-Q8_0"
    assert model.paths == [local.absolute()]
    assert model.sha256 == (hashlib.sha256(local.read_bytes()).hexdigest(),)
    assert model.size == local.stat().st_size and not model.managed
    assert index.import_file(local) == model  # importing twice is harmless
    assert not list(index.index_path.parent.glob("*.tmp"))
    index.remove("My-Model-Q8_0")
    assert local.exists()  # imports belong to the user: rm only forgets them
    assert index.all() == []


def test_import_refuses_what_is_not_a_gguf(index, tmp_path):
    bad = tmp_path / "fake.gguf"
    bad.write_bytes(b"not a gguf at all")
    with pytest.raises(ModelFileError):
        index.import_file(bad)
    with pytest.raises(ModelNotFound):
        index.import_file(tmp_path / "absent.gguf")
    assert index.all() == []


def test_remove_deletes_downloaded_files_and_empty_folders(index, tmp_path):
    folder = index.models_dir / "org" / "repo"
    folder.mkdir(parents=True)
    (folder / "m.gguf").write_bytes(b"x")
    outside = tmp_path / "elsewhere.gguf"
    outside.write_bytes(b"y")
    index.add(
        InstalledModel(
            "m",
            (str(folder / "m.gguf"),),
            1,
            ("0" * 64,),
            "hub",
            catalog_id="cat-m",
            quant="Q4_K_M",
        )
    )
    index.add(InstalledModel("evil", (str(outside),), 1, ("0" * 64,), "hub"))
    assert index.lookup("cat-m") == [folder / "m.gguf"]  # a catalog id finds its quant
    index.remove("cat-m")
    assert not (index.models_dir / "org").exists()
    index.remove("evil")
    assert outside.exists()  # never delete outside the models folder
    with pytest.raises(ModelNotFound, match="not installed"):
        index.remove("m")


def test_damaged_index_is_reported_not_overwritten(index):
    index.index_path.parent.mkdir(parents=True)
    index.index_path.write_text("{broken")
    with pytest.raises(ModelFileError, match="damaged"):
        index.all()
    assert index.index_path.read_text() == "{broken"


def test_hf_cache_discovery_finds_first_shards_and_single_files(tmp_path, tiny_chat, index):
    repo = tmp_path / "hf" / "hub" / "models--bartowski--Tiny-GGUF"
    blob = repo / "blobs" / hashlib.sha256(tiny_chat.read_bytes()).hexdigest()
    blob.parent.mkdir(parents=True)
    shutil.copy(tiny_chat, blob)
    snap = repo / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "Tiny-Q4_K_M.gguf").symlink_to(blob)
    for i in (1, 2):
        (snap / f"Big-Q8_0-0000{i}-of-00002.gguf").write_bytes(tiny_chat.read_bytes())
    (snap / "dangling.gguf").symlink_to(repo / "blobs" / "missing")
    found = discover_hf_cache(tmp_path / "hf")
    assert [(c.repo, c.revision, c.path.name) for c in found] == [
        ("bartowski/Tiny-GGUF", "abc123", "Big-Q8_0-00001-of-00002.gguf"),
        ("bartowski/Tiny-GGUF", "abc123", "Tiny-Q4_K_M.gguf"),
    ]
    split = index.import_file(found[0].path, source="hf-cache", repo=found[0].repo)
    assert split.id == "Big-Q8_0" and len(split.files) == 2


def test_resolver_sees_imported_models(tiny_chat, edgedesk_home):
    ctx = build_context()
    model = ctx.installed.import_file(tiny_chat)
    path, entry, files = ctx.resolver.locate(model.id)
    assert (path, entry, files) == (tiny_chat.absolute(), None, [tiny_chat.absolute()])
    assert ctx.resolver(model.id).model_id == tiny_chat.name.removesuffix(".gguf")


def _downloaded(index: InstalledIndex, tiny_chat: Path) -> InstalledModel:
    path = index.models_dir / "org" / "Tiny-GGUF" / "tiny-Q8_0.gguf"
    path.parent.mkdir(parents=True)
    shutil.copy(tiny_chat, path)
    return index.add(
        InstalledModel(
            id="tiny-Q8_0",
            files=(str(path),),
            size=path.stat().st_size,
            sha256=("0" * 64,),
            source="hub",
            repo="org/Tiny-GGUF",
        )
    )


def test_downloaded_files_are_recorded_relative_and_move_with_the_data_folder(
    index, tiny_chat, tmp_path
):
    _downloaded(index, tiny_chat)
    local = tmp_path / "mine" / "kept-elsewhere.gguf"
    local.parent.mkdir()
    shutil.copy(tiny_chat, local)
    index.import_file(local)
    stored = {m["id"]: m["files"] for m in json.loads(index.index_path.read_text())["models"]}
    assert stored == {
        "tiny-Q8_0": ["org/Tiny-GGUF/tiny-Q8_0.gguf"],
        "kept-elsewhere": [str(local.absolute())],
    }
    # The whole data folder copied elsewhere (as 'edgedesk data move' across drives),
    # the old one gone: every entry still names a file that is there.
    moved = tmp_path / "new-drive" / "data"
    shutil.copytree(index.index_path.parent, moved)
    shutil.rmtree(index.index_path.parent)
    there = InstalledIndex(moved / "installed.json", moved / "models")
    assert there.lookup("tiny-Q8_0") == [moved / "models" / "org" / "Tiny-GGUF" / "tiny-Q8_0.gguf"]
    assert there.lookup("kept-elsewhere") == [local.absolute()]


def test_an_older_index_with_absolute_paths_still_reads(index, tiny_chat, tmp_path):
    path = tmp_path / "old-place" / "models" / "org" / "Tiny-GGUF" / "tiny-Q8_0.gguf"
    path.parent.mkdir(parents=True)
    shutil.copy(tiny_chat, path)
    index.index_path.parent.mkdir(parents=True)
    index.index_path.write_text(
        json.dumps(
            {
                "version": 1,
                "models": [
                    {
                        "id": "tiny-Q8_0",
                        "files": [str(path)],
                        "size": 1,
                        "sha256": ["0" * 64],
                        "source": "hub",
                        "managed": True,
                        "installed_at": 1.0,
                    }
                ],
            }
        )
    )
    assert index.lookup("tiny-Q8_0") == [path]
    shutil.copytree(path.parents[2], index.models_dir)  # the data folder moved: found again
    shutil.rmtree(tmp_path / "old-place")
    fresh = InstalledIndex(index.index_path, index.models_dir)
    assert fresh.lookup("tiny-Q8_0") == [index.models_dir / "org" / "Tiny-GGUF" / "tiny-Q8_0.gguf"]


def test_the_index_is_parsed_once_per_change(index, tiny_chat, monkeypatch):
    from desktop.catalog import _installed as installed

    _downloaded(index, tiny_chat)
    other = InstalledIndex(index.index_path, index.models_dir)  # another process
    assert other.get("tiny-Q8_0") is not None
    parses: list[str] = []
    real_loads = installed.json.loads

    def counting_loads(text: str) -> object:
        parses.append(text)
        return real_loads(text)

    monkeypatch.setattr(installed.json, "loads", counting_loads)
    for _ in range(5):  # the Models screen and /v1/models list often
        assert [m.id for m in index.all()] == ["tiny-Q8_0"]
        assert index.lookup("tiny-Q8_0") is not None
    assert len(parses) == 1
    other.remove("tiny-Q8_0")  # it had parsed this version already
    assert index.all() == [] and len(parses) == 2
