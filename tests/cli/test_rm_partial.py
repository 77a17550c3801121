"""``edgedesk models rm`` also throws away what a paused or interrupted pull left."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop.cli import main
from tests.fixtures.fake_hub import FakeHub

CAT_ID = "glm-edge-1.5b"
CAT_REPO = "THUDM/glm-edge-1.5b-chat-gguf"
CAT_FILE = "ggml-model-Q4_K_M.gguf"
REPO = "org/tiny-GGUF"
BIG = "tiny-big-Q8_0.gguf"


@pytest.fixture
def hub(hub: FakeHub) -> FakeHub:
    """The shared fake Hub (tests/conftest.py) with one big file."""
    hub.add_repo(REPO, {BIG: os.urandom(300_000)})
    return hub


def _leave_part(home: Path, repo: str, name: str, size: int) -> Path:
    """What a pull killed halfway (Ctrl-C, crash, reboot) leaves on disk."""
    part = home / "data" / "models" / repo / (name + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(b"\0" * size)
    return part


def test_rm_deletes_a_partial_pull_and_the_next_pull_starts_afresh(hub, edgedesk_home, capsys):
    part = _leave_part(edgedesk_home, REPO, BIG, 120_000)
    assert main(["models", "rm", f"{REPO}:{BIG}"]) == 0
    out = capsys.readouterr().out
    assert f"deleted the partial download of {REPO}:{BIG} (120.0 KB freed)" in out
    assert "removed" not in out  # nothing was installed
    assert not part.exists() and not (edgedesk_home / "data" / "models" / "org").exists()

    assert main(["models", "pull", f"{REPO}:{BIG}"]) == 0
    assert [e.range for e in hub.downloads()] == ["bytes=0-"]


def test_rm_of_a_catalog_id_deletes_its_partial_download(hub, edgedesk_home, capsys):
    part = _leave_part(edgedesk_home, CAT_REPO, CAT_FILE, 2048)
    other = _leave_part(edgedesk_home, CAT_REPO, "ggml-model-Q8_0.gguf", 10)
    assert main(["models", "rm", CAT_ID]) == 0
    assert "(2.0 KB freed)" in capsys.readouterr().out
    assert not part.exists()
    assert other.exists()  # another quant's pull is not this one


def test_rm_of_something_neither_installed_nor_partial_still_fails(hub, capsys):
    assert main(["models", "rm", CAT_ID]) != 0
    assert f"{CAT_ID} is not installed" in capsys.readouterr().err
