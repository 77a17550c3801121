"""Loading as planned, and backing off once when memory runs out."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from desktop.engine import loader
from desktop.engine.types import LocalPlan, ModelSpec
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


def test_the_plan_reaches_the_engine_and_an_engine_without_slots_serves_one(
        tiny_chat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    class Recording(loader.LoadedEngine):
        def __init__(self, path: Path, options: Any, **kwargs: Any) -> None:
            seen.append(options)
            super().__init__(path, options, **kwargs)

    monkeypatch.setattr(loader, "LoadedEngine", Recording)
    spec = ModelSpec(tiny_chat, "tiny", context_length=512, threads=2,
                     plan=LocalPlan(parallel=3, batch_threads=2, n_batch=256))
    engine = loader.load_engine(spec)
    [options] = seen
    assert (options.context_length, options.threads) == (512, 2)  # per slot
    known = {f.name for f in dataclasses.fields(options)}
    # Each knob this engine takes carries the plan's value (the slot engine takes all).
    for name, value in (("parallel", 3), ("batch_threads", 2), ("n_batch", 256)):
        assert name not in known or getattr(options, name) == value
    assert engine.parallel == (3 if "parallel" in known else 1)
    assert engine.stats().slots_total == engine.parallel
    engine.close()
