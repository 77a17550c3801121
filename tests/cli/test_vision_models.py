"""Vision models on disk: a catalog pull brings the projector with the model (resumable,
SHA-256 verified), ``models import --mmproj`` records a local one, ``models info`` says
the model sees, the fit counts the projector, and the resolver hands it to the engine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.base.errors import ModelNotAllowed
from desktop.catalog._entries import load_catalog
from desktop.cli import main
from desktop.root.context import build_context
from desktop.server._model_directory import ResolverDirectory
from tests.fixtures.fake_hub import FakeHub, Fault, sha256
from tests.fixtures.vision import write_header_projector

KIMI = "kimi-vl-a3b-thinking-2506"
REPO = "ggml-org/Kimi-VL-A3B-Thinking-2506-GGUF"
MODEL = "Kimi-VL-A3B-Thinking-2506-Q4_K_M.gguf"
PROJECTOR = "mmproj-Kimi-VL-A3B-Thinking-2506-Q8_0.gguf"


@pytest.fixture
def projector(tmp_path: Path) -> Path:
    return write_header_projector(tmp_path / "mmproj-tiny.gguf")


@pytest.fixture
def hub(hub: FakeHub, tiny_chat: Path, projector: Path) -> FakeHub:
    # A longer projector file, so a dropped connection can strike in the middle of it.
    projector_bytes = projector.read_bytes() + os.urandom(200_000)
    hub.add_repo(REPO, {MODEL: tiny_chat.read_bytes(), PROJECTOR: projector_bytes})
    return hub


def test_the_catalog_names_real_vision_entries() -> None:
    entries = {e.id: e for e in load_catalog() if e.mmproj}
    assert entries[KIMI].repo == REPO and entries[KIMI].mmproj == PROJECTOR
    assert {e.family for e in entries.values()} == {"kimi", "glm"}


def test_pull_fetches_the_projector_too_resuming_and_verifying(
    hub: FakeHub, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hub.add_fault(REPO, PROJECTOR, Fault("drop", after=100_000, times=1))
    assert main(["models", "pull", KIMI]) == 0
    out = capsys.readouterr().out
    folder = edgedesk_home / "data" / "models" / REPO
    assert f"{folder / PROJECTOR} (vision projector)" in out
    served = hub.repos[REPO].files
    assert (folder / PROJECTOR).read_bytes() == served[PROJECTOR]
    # The dropped download went on from where it broke, not from the start.
    ranges = [e.range for e in hub.downloads() if e.path.endswith(PROJECTOR)]
    assert ranges[-1] is not None and int(ranges[-1].split("=")[1].rstrip("-")) >= 100_000
    index = json.loads((edgedesk_home / "data" / "installed.json").read_text())
    [record] = index["models"]
    assert record["projector"] == f"{REPO}/{PROJECTOR}"  # relative: moves with the folder
    assert record["projector_sha256"] == sha256(served[PROJECTOR])

    ctx = build_context()
    try:
        spec = ctx.resolver(KIMI)
        assert spec.local is not None and spec.local.projector == folder / PROJECTOR
        assert ResolverDirectory(ctx.resolver).vision(KIMI)
        info = ctx.resolver.info(folder / MODEL)
        # The projector loads beside the model: the fit counts its bytes.
        assert ctx.resolver.fit(
            info, 2048, projector=folder / PROJECTOR
        ).estimated_bytes == ctx.resolver.fit(info, 2048).estimated_bytes + len(served[PROJECTOR])
    finally:
        ctx.close()
    assert main(["models", "info", KIMI]) == 0
    assert f"vision: yes (projector {folder / PROJECTOR})" in capsys.readouterr().out
    assert main(["models", "rm", KIMI]) == 0
    assert not (folder / PROJECTOR).exists() and not (folder / MODEL).exists()


def test_a_corrupted_projector_is_refused_and_pulled_again(
    hub: FakeHub, capsys: pytest.CaptureFixture[str]
) -> None:
    hub.add_fault(REPO, PROJECTOR, Fault("corrupt", after=5000, times=1))
    assert main(["models", "pull", KIMI]) != 0
    assert PROJECTOR in capsys.readouterr().err
    assert main(["models", "pull", KIMI]) == 0


def test_a_catalog_vision_model_before_download_says_it_sees(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "info", KIMI]) == 0
    assert f"vision: yes (projector {PROJECTOR}" in capsys.readouterr().out


def test_import_with_mmproj_records_the_projector(
    tiny_chat: Path, projector: Path, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "info", str(tiny_chat)]) == 0
    assert "vision: no" in capsys.readouterr().out
    assert main(["models", "import", str(tiny_chat), "--mmproj", str(projector)]) == 0
    assert f"vision: yes (projector {projector})" in capsys.readouterr().out
    [record] = json.loads((edgedesk_home / "data" / "installed.json").read_text())["models"]
    assert record["projector"] == str(projector) and record["managed"] is False
    assert main(["models", "info", "tiny-chat"]) == 0
    assert f"vision: yes (projector {projector})" in capsys.readouterr().out
    ctx = build_context()
    try:
        assert ResolverDirectory(ctx.resolver).vision("tiny-chat")
        # A model the policy blocks says so, not that it cannot see.
        ctx.resolver.allowed_models = ["some-other-model"]
        with pytest.raises(ModelNotAllowed):
            ResolverDirectory(ctx.resolver).vision("tiny-chat")
    finally:
        ctx.close()
    assert main(["models", "rm", "tiny-chat"]) == 0
    assert projector.exists() and tiny_chat.exists()  # imported files are left alone


def test_import_refuses_what_is_not_a_projector(
    tiny_chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "import", str(tiny_chat), "--mmproj", str(tiny_chat)]) != 0
    assert "is not a vision projector" in capsys.readouterr().err
    assert (
        main(["models", "import", str(tiny_chat), "--mmproj", str(tmp_path / "missing.gguf")]) != 0
    )
    assert "no such projector file" in capsys.readouterr().err
    assert main(["models", "list", "--json"]) == 0  # nothing was imported
    assert "tiny-chat" not in capsys.readouterr().out
