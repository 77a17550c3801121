"""Loading as planned, and backing off once when memory runs out."""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop.base.errors import ModelLoadError
from desktop.engine import _loader as loader
from desktop.engine._types import LocalPlan, ModelSpec


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


def test_out_of_memory_retries_once_smaller_and_says_so(
    tiny_chat: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="edgedesk.engine"):
        engine = loader.load_engine(
            ModelSpec(tiny_chat, "tiny", context_length=4096), open_engine=_OnlySmallContexts
        )
    assert engine.report.context_length == 2048
    assert any("loaded with context 2048" in note for note in engine.report.notes)
    assert [r.getMessage() for r in caplog.records if r.name == "edgedesk.engine"] == [
        "load tiny: retry 1 with context 2048, 0 GPU layers, f16 KV cache"
    ]
    engine.close()


def test_second_failure_gives_one_clear_error(tiny_chat: Path) -> None:
    with pytest.raises(ModelLoadError, match="tried context 8192.*smaller quant"):
        loader.load_engine(
            ModelSpec(tiny_chat, "tiny", context_length=16384), open_engine=_OnlySmallContexts
        )


def test_the_plan_reaches_the_engine_and_an_engine_without_slots_serves_one(
    tiny_chat: Path,
) -> None:
    seen: list[Any] = []

    class Recording(loader.LoadedEngine):
        def __init__(self, path: Path, options: Any, **kwargs: Any) -> None:
            seen.append(options)
            super().__init__(path, options, **kwargs)

    spec = ModelSpec(
        tiny_chat,
        "tiny",
        context_length=512,
        threads=2,
        plan=LocalPlan(parallel=3, batch_threads=2, n_batch=256),
    )
    engine = loader.load_engine(spec, open_engine=Recording)
    [options] = seen
    assert (options.context_length, options.threads) == (512, 2)  # per slot
    known = {f.name for f in dataclasses.fields(options)}
    # Each knob this engine takes carries the plan's value (the slot engine takes all).
    for name, value in (("parallel", 3), ("batch_threads", 2), ("n_batch", 256)):
        assert name not in known or getattr(options, name) == value
    assert engine.parallel == (3 if "parallel" in known else 1)
    assert engine.stats().slots_total == engine.parallel
    engine.close()


@pytest.mark.skipif(os.name != "posix", reason="file names are bytes on POSIX only")
def test_a_file_name_that_is_not_utf8_loads_through_a_link_with_a_utf8_name(
    tiny_chat: Path, tmp_path: Path
) -> None:
    # llama.cpp takes its path as UTF-8 text, which cannot spell this name.
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/bad\xff.gguf"))
    shutil.copyfile(tiny_chat, odd)
    opened: list[Path] = []

    class Recording(loader.LoadedEngine):
        def __init__(self, path: Path, options: Any, **kwargs: Any) -> None:
            opened.append(path)
            super().__init__(path, options, **kwargs)

    links = tmp_path / "links"
    engine = loader.load_engine(
        ModelSpec(odd, "bad", context_length=256), links_dir=links, open_engine=Recording
    )
    engine.close()
    [path] = opened
    assert path.parent == links and os.fspath(path).encode("utf-8")
    assert path.resolve() == odd.resolve() and engine.report.path == odd
    again = loader.load_engine(
        ModelSpec(odd, "bad", context_length=256), links_dir=links, open_engine=Recording
    )
    again.close()
    assert opened[1] == path and len(list(links.iterdir())) == 1  # the same link, reused
