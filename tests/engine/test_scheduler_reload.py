"""A changed load setting reaches a loaded model at its next request, with the real engine."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai

from desktop.base.config import ServerSettings
from desktop.engine._types import ChatCall, GenerationParams, Message
from desktop.root.context import build_context

HI = [{"role": "user", "content": "hello"}]


def _slots(metrics_url: str) -> list[tuple[str, int]]:
    models = httpx.get(metrics_url, params={"format": "json"}, timeout=30).json()["models"]
    return [(m["model"], m["slots_total"]) for m in models]


def test_changing_engine_parallel_reloads_the_model_at_its_next_request(tiny_chat: Path) -> None:
    ctx = build_context()
    try:
        ctx.apply_settings({"engine.parallel": 2})
        runner = ctx.new_api_server(
            settings=ServerSettings(require_key=False).model_copy(update={"port": 0}),
            model_paths=[tiny_chat],
        )
        runner.start()
        metrics = runner.url.removesuffix("/v1") + "/metrics"
        with openai.OpenAI(base_url=runner.url, api_key="x", max_retries=0) as client:
            client.chat.completions.create(
                model="tiny-chat",
                messages=HI,  # type: ignore[arg-type]
                max_tokens=2,
            )
            assert _slots(metrics) == [("tiny-chat", 2)]
            first = ctx.scheduler.loaded(counters=True)[0].stats
            assert first is not None and first.slots_total == 2
            # The setting applies now, not at the next start, and to the loaded model.
            assert "engine.parallel" not in ctx.apply_settings({"engine.parallel": 3})
            client.chat.completions.create(
                model="tiny-chat",
                messages=HI,  # type: ignore[arg-type]
                max_tokens=2,
            )
            assert _slots(metrics) == [("tiny-chat", 3)]
            again = ctx.scheduler.loaded(counters=True)[0].stats
            assert again is not None and again.slots_total == 3
            # An unchanged plan keeps the model: the next request does not reload it.
            answer = list(
                ctx.scheduler.stream_chat(
                    "tiny-chat",
                    ChatCall.of([Message("user", "hello")], GenerationParams(max_tokens=1)),
                )
            )
            assert answer[-1].timings is not None and answer[-1].timings.load_s == 0
    finally:
        ctx.close()
