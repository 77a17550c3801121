"""The composition root wires settings into the scheduler and resolver."""

from __future__ import annotations

from pathlib import Path

from desktop.app import build_context
from desktop.config import NoPolicy


def test_preload_warms_listed_models_and_reports_failures(edgedesk_home: Path,
                                                          tiny_chat: Path) -> None:
    ctx = build_context(
        cli_settings={"engine.preload": [str(tiny_chat), "no-such-model"],
                      "engine.keep_alive_s": 30},
        policy=NoPolicy())
    failures = ctx.preload()
    assert list(failures) == ["no-such-model"] and "unknown model" in failures["no-such-model"]
    loaded = ctx.scheduler.loaded()
    assert [m.model_id for m in loaded] == ["tiny-chat"]
    assert ctx.scheduler.keep_alive_s == 30
    ctx.close()
    assert ctx.scheduler.loaded() == []
