"""A model that makes llama.cpp abort, from the terminal: one line and exit 4, never
exit 134; three crashed runs mark it broken (``models info`` says why), ``models retry``
lets it load again. Real processes, a real ``GGML_ASSERT`` in the model's worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.engine._scheduler import CRASHES_TO_BROKEN
from tests.cli.test_run import edgedesk
from tests.fixtures.tiny_gguf import write_tiny_llama


@pytest.fixture
def aborting(tmp_path: Path) -> tuple[Path, Path]:
    """An EDGEDESK_HOME with a model imported that llama.cpp aborts on, and its id."""
    home = tmp_path / "home"
    model = write_tiny_llama(tmp_path / "aborts.gguf", n_head_kv=3)
    imported = edgedesk("models", "import", str(model), home=home)
    assert imported.returncode == 0, imported.stderr
    return home, model


def test_a_model_that_aborts_llama_cpp_is_one_line_and_exit_4(aborting: tuple[Path, Path]) -> None:
    home, _ = aborting
    result = edgedesk("run", "aborts", "hello", "--max-tokens", "4", home=home)
    assert result.returncode == 4, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "llama.cpp stopped while loading aborts (aborted (SIGABRT))" in lines[0]
    assert "GGML_ASSERT(ggml_can_mul_mat(k, q)) failed" in lines[0]
    assert "Traceback" not in result.stderr


def test_three_crashed_runs_mark_it_broken_until_retried(aborting: tuple[Path, Path]) -> None:
    home, _ = aborting
    for _ in range(CRASHES_TO_BROKEN):
        assert edgedesk("run", "aborts", "hi", "--max-tokens", "2", home=home).returncode == 4
    refused = edgedesk("run", "aborts", "hi", "--max-tokens", "2", home=home)
    assert refused.returncode == 4
    assert "crashed every time it loaded" in refused.stderr
    assert "edgedesk models retry aborts" in refused.stderr
    info = edgedesk("models", "info", "aborts", home=home)
    assert info.returncode == 0, info.stderr
    assert "broken         crashed on every load (aborted (SIGABRT): " in info.stdout
    retried = edgedesk("models", "retry", "aborts", home=home)
    assert retried.returncode == 0
    assert "aborts will be loaded again at its next request" in retried.stdout
    again = edgedesk("run", "aborts", "hi", "--max-tokens", "2", home=home)
    assert "llama.cpp stopped while loading" in again.stderr  # tried again, not refused
    assert "broken" not in edgedesk("models", "info", "aborts", home=home).stdout
