"""Loading as planned, and backing off once when memory runs out."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.engine import loader
from desktop.engine.types import ModelSpec
from desktop.errors import ModelLoadError


class _OnlySmallContexts(loader.LoadedEngine):
    """Behaves like a machine where only a 2048-token context fits in memory."""

    def __init__(self, path: Path, options, **kwargs) -> None:
        if options.context_length > 2048:
            raise ModelLoadError(f"could not allocate KV cache for {options.context_length} tokens")
        super().__init__(path, options, **kwargs)


def test_load_reports_the_plan_and_template(tiny_chat: Path) -> None:
    engine = loader.load_engine(ModelSpec(tiny_chat, "tiny", context_length=512))
    report = engine.report
    assert report.context_length >= 512 and report.gpu_layers == 0
    assert report.template_source == "gguf" and report.notes == ()
    assert report.load_s > 0


def test_out_of_memory_retries_once_smaller_and_says_so(tiny_chat: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "LoadedEngine", _OnlySmallContexts)
    engine = loader.load_engine(ModelSpec(tiny_chat, "tiny", context_length=4096))
    assert engine.report.context_length == 2048
    assert any("loaded with context 2048" in note for note in engine.report.notes)


def test_second_failure_gives_one_clear_error(tiny_chat: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "LoadedEngine", _OnlySmallContexts)
    with pytest.raises(ModelLoadError, match="tried context 8192.*smaller quant"):
        loader.load_engine(ModelSpec(tiny_chat, "tiny", context_length=16384))
