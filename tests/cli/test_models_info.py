"""``edgedesk models info --ctx N`` shows the KV cache the engine will allocate.

For a sliding-window model that is not context x bytes per token: its windowed layers
keep only the slots' windows (issue 36), and ``engine.swa_full_cache`` makes them full.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.cli import main


def _info(capsys: pytest.CaptureFixture[str], model: Path, *extra: str) -> dict[str, object]:
    assert main(["models", "info", str(model), "--ctx", "8192", *extra]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_models_info_shows_a_window_sized_kv_cache_and_the_full_one_when_set(
    gemma_path: Path, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _info(capsys, gemma_path, "--json")
    # Gemma 3 270M: 3 global layers keep 8192 cells, 15 windowed layers the 4 slots'
    # 512-token windows and a 512-token micro-batch; 1 KiB per layer and cell at f16.
    assert data["kv_cache_bytes"] == 1024 * (3 * 8192 + 15 * 2560)
    assert data["checkpoint_bytes"] == 4 * 1024 * 15 * 1024
    assert main(["models", "info", str(gemma_path), "--ctx", "8192"]) == 0
    assert "15 of 18 layers keep only it" in capsys.readouterr().out

    Paths.from_env({"EDGEDESK_HOME": str(edgedesk_home)}).settings_file.write_text(
        "[engine]\nswa_full_cache = true\n"
    )
    full = _info(capsys, gemma_path, "--json")
    assert full["kv_cache_bytes"] == 4 * 18 * 1024 * 8192  # every layer, once per slot
    assert full["checkpoint_bytes"] == 0
